"""`python -m snakemake` for the test cluster (tests/test_slurm.py), with the SLURM plugin's
status back-off capped.

After each status check that finds no finished job the plugin waits 10 s longer (up to 180 s),
which suits a busy cluster; the test cluster's jobs take seconds, so a five-job chain would spend
a minute asleep. Only the wait between checks changes: submission, partitions, status commands and
the jobs themselves are the plugin's own.
"""

from snakemake.cli import main
from snakemake_interface_executor_plugins.executors.remote import RemoteExecutor

MAX_SECONDS_BETWEEN_STATUS_CHECKS = 2

_wait = RemoteExecutor.next_seconds_between_status_checks
RemoteExecutor.next_seconds_between_status_checks = _wait.setter(
    lambda executor, seconds: _wait.fset(executor, min(seconds, MAX_SECONDS_BETWEEN_STATUS_CHECKS)))

if __name__ == "__main__":
    main()
