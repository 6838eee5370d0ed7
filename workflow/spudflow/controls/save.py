"""Writing a trained control: the save_pretrained directory the scoring stage loads, the loss
of every step and the training settings, all or nothing (core/atomic.py)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from spudflow.core.artifacts import CONTROL_LOSSES
from spudflow.core.atomic import atomic_outputs
from spudflow.core.contract import write_artifact

LOSS_FILE = "training_loss.parquet"
SETTINGS_FILE = "control.json"
LOSS_SCHEMA = CONTROL_LOSSES.polars_schema()


def is_control(folder: Path) -> bool:
    """A folder `control-train` wrote: its settings and losses say so."""
    from spudflow.core.contract import artifact_of

    return (folder / SETTINGS_FILE).is_file() and \
        artifact_of(folder / LOSS_FILE) == CONTROL_LOSSES.name


def save_control(out: Path, trained, tokenizer, settings: dict) -> None:
    with atomic_outputs() as outputs:
        directory = outputs.dir(out, "a control model", is_control)
        trained.model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
        write_artifact(pl.DataFrame(trained.losses, schema=LOSS_SCHEMA), directory / LOSS_FILE,
                       CONTROL_LOSSES)
        (directory / SETTINGS_FILE).write_text(json.dumps(settings, indent=2) + "\n",
                                               encoding="utf-8")
