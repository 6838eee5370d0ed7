"""The planning every stage shares: a Plan answers what the config makes (treebanks, nonce
treebanks, items datasets, scoring jobs, probe runs) for the rules of any stage. Each stage's
plan (spudflow.<stage>.plan) is a Plan with its own rules' input, params and resource functions."""

from __future__ import annotations

from spudflow.core.plan_items import ItemsQueries
from spudflow.core.plan_nonce import NonceQueries
from spudflow.core.plan_probe import ProbeQueries
from spudflow.core.plan_scores import ScoringQueries


class Plan(NonceQueries, ItemsQueries, ScoringQueries, ProbeQueries):
    """The validated config (defaults filled in from the schema) and the workflow's code."""
