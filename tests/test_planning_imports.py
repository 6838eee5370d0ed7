"""What a Snakemake process imports to plan one job: on a cluster every job starts two (the
job's own and the one srun starts), each of which reads the Snakefile and plans that job. Planning
needs the config, the registries and the artifact definitions, never a data-frame library:
polars cost each of them about a tenth of a second, loaded only for the front page's list of
what it shows and for helpers beside the definitions."""

from __future__ import annotations

import json
import subprocess
import sys

from workflow_helpers import copy_workflow

PLAN_ONE_JOB = """
import json, sys
from snakemake.cli import main
try:
    main(["-n", "--quiet", "all", "--cores", "1", sys.argv[1]])
except SystemExit as done:
    code = done.code
print(json.dumps({"code": code, "polars": "polars" in sys.modules}))
"""


def test_planning_a_table_job_imports_no_polars(tmp_path):
    workdir = copy_workflow(tmp_path / "copy")
    done = subprocess.run([sys.executable, "-c", PLAN_ONE_JOB, "results/tables/treebank_stats.csv"],
                          cwd=workdir, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == {"code": 0, "polars": False}
