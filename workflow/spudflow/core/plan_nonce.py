"""What the pairs, scoring and probe stages plan from the nonce stage: which nonce treebanks a run
makes (spudflow.core.nonce_plan) and where they are."""

from __future__ import annotations

from spudflow.core import nonce_plan
from spudflow.core.plan_base import PlanBase


def nonce_dir(treebank, split, method, seed):
    return f"results/nonce/{treebank}/{split}/{method}/seed{seed}"


def nonce_tokens(treebank, split, versions):
    """tokens.parquet of these nonce versions ((method, seed) pairs) of a split."""
    return [
        f"{nonce_dir(treebank, split, method, seed)}/tokens.parquet" for method, seed in versions
    ]


class NonceQueries(PlanBase):
    def nonce_versions(self):
        """(method, seed) of every nonce version the `nonce:` section describes."""
        return nonce_plan.nonce_versions(self.config)

    def nonce_runs(self):
        """(treebank, split, method, seed) of every nonce treebank something reads: the plan the
        pairs and probe rules read too (spudflow.core.nonce_plan)."""
        return nonce_plan.nonce_runs(self.config)

    def nonce_stats_files(self):
        """The per-split replacement statistics (docs/nonce.md); the aggregate stage reads them."""
        return [f"{nonce_dir(*run)}/replacement_stats.parquet" for run in self.nonce_runs()]
