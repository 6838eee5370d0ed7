"""spudflow: a Snakemake pipeline that tests what language models know about syntax."""

__version__ = "0.1.0"
