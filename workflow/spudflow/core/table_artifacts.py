"""The result tables (results/tables/*.parquet) the aggregate, ingest and nonce stages write, and
the figures read: columns, types and nullability, defined once (see core/artifacts.py)."""

from __future__ import annotations

from spudflow.core.artifacts import STAGE_ARTIFACTS

TABLE_ARTIFACTS = ()

ALL_ARTIFACTS = STAGE_ARTIFACTS + TABLE_ARTIFACTS
