"""Aggregation: result tables, statistics and figures collected across the pipeline's outputs."""
