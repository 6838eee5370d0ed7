"""Ingestion: CoNLL-U files in, the Parquet treebank format (core.treebank) out, and back."""
