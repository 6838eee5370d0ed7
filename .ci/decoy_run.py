"""Make the checkout look like `make run` finished in it: a stale file (or folder) at every output
of the default config's whole DAG, and a .snakemake/ folder. CI runs the tests beside it, so a
test that plans or reads in the checkout instead of a copy fails (Snakemake finds nothing to
do, or reads junk). Refuses to touch a checkout that already has results/ or .snakemake/."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

STALE = b"stale: written by .ci/decoy_run.py, not by the workflow\n"


def main() -> int:
    if (REPO / "results").exists() or (REPO / ".snakemake").exists():
        print("decoy_run: results/ or .snakemake/ exists already; left as it is", file=sys.stderr)
        return 1
    from workflow_helpers import copy_checkout, plan

    with tempfile.TemporaryDirectory() as tmp:
        full = plan(copy_checkout(Path(tmp) / "workflow"), forceall=True)
    outputs = {f for files in full.outputs.values() for f in files}
    for name, directory in sorted(outputs):
        path = REPO / name
        if directory:
            path.mkdir(parents=True, exist_ok=True)
            path = path / "stale"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(STALE)
    (REPO / ".snakemake" / "log").mkdir(parents=True)
    (REPO / ".snakemake" / "log" / "stale.snakemake.log").write_bytes(STALE)
    print(f"decoy_run: {len(outputs)} stale outputs under {REPO / 'results'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
