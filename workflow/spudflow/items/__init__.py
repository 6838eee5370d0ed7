"""Minimal pairs and template datasets, all written as one items table (docs/items.md)."""
