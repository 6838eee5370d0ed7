"""Pieces of a rule's shell command that both the planning (Snakemake) and a command's own
planning hooks (an items builder's `arguments`) write: imports nothing a job's env lacks."""

from __future__ import annotations

import shlex


def quoted(args):
    return " ".join(shlex.quote(str(a)) for a in args)


def sample_args(sample, seed_flag="--seed"):
    """`--sample N --seed S` from a `sample: {n, seed}` config entry; "" keeps everything."""
    if not sample or sample["n"] is None:
        return ""
    return f"--sample {sample['n']} {seed_flag} {sample['seed']}"
