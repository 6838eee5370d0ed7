"""A throwaway single-node SLURM cluster on localhost, for tests/test_slurm.py.

Debian's munge, slurmctld and slurmd run in the foreground as children of the test, with every
file (key, sockets, state, logs, slurm.conf, gres.conf) in one temporary directory and free ports,
so nothing outside that directory is touched and each daemon is stopped by its PID. The node
offers one fake GPU (GRES `gpu` backed by /dev/null) so that `--gpus=1` jobs are accepted.
As a real cluster does, it kills a job step that uses more memory than its job asked for
(sampled every second: OverMemoryKill, which needs no cgroups) and requeues only jobs submitted
with --requeue (JobRequeue=0); jobs that ask for it (`--oversubscribe`) share the node's CPUs.

Every process of the cluster, daemons and jobs alike, carries CLUSTER_VARIABLE in its
environment (jobs get the submitter's, sbatch --export=ALL): stop() kills those that outlive the
daemons. SLURM here tracks a job's processes by parentage (proctrack/linuxproc), so a job step
reparented away from its slurmstepd (a requeued job's, say) escapes `scancel` and would keep
running for ever once no slurmd is left to end it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

from leftover_processes import end_all
from waiting import wait_until

PACKAGES = ("munge", "slurmctld", "slurmd", "slurm-client")
COMMANDS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo", "scancel")
# Jobs stay visible to squeue this long after they end. The executor plugin polls with squeue
# and needs MinJobAge >= 3x --slurm-init-seconds-before-status-checks; long enough also lets the
# test read every finished job's record after the run.
MIN_JOB_AGE_S = 600
CLUSTER_VARIABLE = "SPUDFLOW_TEST_SLURM_CLUSTER"
# How long the daemons get to start and leftover jobs to end before the cluster is unusable.
START_TIMEOUT_S = 600


class SlurmUnavailable(RuntimeError):
    """SLURM cannot be installed or started here."""


def ensure_installed() -> None:
    """Install Debian's SLURM and munge packages if a command is missing (needs root)."""
    if all(shutil.which(c) for c in COMMANDS):
        return
    if os.geteuid() != 0:
        raise SlurmUnavailable(f"SLURM commands missing and not root to install {PACKAGES}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *PACKAGES]
    for command in (["apt-get", "update", "-q"], install):
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            raise SlurmUnavailable(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    missing = [c for c in COMMANDS if not shutil.which(c)]
    if missing:
        raise SlurmUnavailable(f"still missing after apt-get install: {missing}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_hardware() -> dict[str, int]:
    """CPUs, sockets, cores, threads and memory as slurmd detects them (`slurmd -C`)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    fields = dict(item.split("=", 1) for item in out.split() if "=" in item)
    keys = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory")
    return {key: int(fields[key]) for key in keys}


class SlurmCluster:
    """munged + slurmctld + slurmd (node `localhost`, partitions `cpu` and `gpu`) under `root`."""

    def __init__(self, root: Path):
        self.root = root
        self.conf = root / "slurm.conf"
        self.bin = root / "bin"
        self.env = {
            **os.environ,
            "SLURM_CONF": str(self.conf),
            "PATH": os.pathsep.join([str(self.bin), os.environ.get("PATH", "")]),
            CLUSTER_VARIABLE: str(root),
        }
        self.leftovers: dict[int, str] = {}  # what stop() had to kill: pid -> command line
        self.daemons: list[subprocess.Popen] = []
        self._outputs: list = []

    def write_config(self) -> None:
        for sub in ("state", "spool", "log"):
            (self.root / sub).mkdir()
        munge = self.root / "munge"
        munge.mkdir(mode=0o755)
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        hw = node_hardware()
        hw["RealMemory"] = min(hw["RealMemory"], 8000)
        node = " ".join(f"{k}={v}" for k, v in hw.items())
        r = self.root
        self.conf.write_text(
            f"""ClusterName=spudflowtest
SlurmctldHost=localhost
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge / "munge.socket"}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r / "state"}
SlurmdSpoolDir={r / "spool"}
SlurmctldPidFile={r / "slurmctld.pid"}
SlurmdPidFile={r / "slurmd.pid"}
SlurmctldLogFile={r / "log" / "slurmctld.log"}
SlurmdLogFile={r / "log" / "slurmd.log"}
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
JobRequeue=0
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge={MIN_JOB_AGE_S}
GresTypes=gpu
NodeName=localhost {node} Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=gpu Nodes=localhost MaxTime=INFINITE State=UP
""",
            encoding="utf-8",
        )
        # The slurm-jobstep executor plugin drops every SLURM_* variable, SLURM_CONF too, before
        # its nested `srun`, which then finds no config; this srun puts it back. (A cluster whose
        # slurm.conf is not in /etc/slurm needs the same: see docs/running.md.)
        self.bin.mkdir()
        srun = self.bin / "srun"
        srun.write_text(
            f'#!/bin/sh\nSLURM_CONF="{self.conf}" exec "{shutil.which("srun")}" "$@"\n',
            encoding="utf-8",
        )
        srun.chmod(0o755)
        # No GPU here: the GRES is a device file that exists, which is all slurmd checks.
        (self.root / "gres.conf").write_text(
            "AutoDetect=off\nNodeName=localhost Name=gpu File=/dev/null\n", encoding="utf-8"
        )

    def _spawn(self, name: str, command: list[str]) -> None:
        log = (self.root / "log" / f"{name}.out").open("w")
        self._outputs.append(log)
        self.daemons.append(
            subprocess.Popen(
                command, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
        )

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Start the daemons and wait until the node is idle; raises SlurmUnavailable."""
        ensure_installed()
        self.write_config()
        munge = self.root / "munge"
        self._spawn("munged", [
            "munged", "--foreground", "--force", f"--socket={munge / 'munge.socket'}",
            f"--key-file={munge / 'munge.key'}", f"--pid-file={munge / 'munged.pid'}",
            f"--log-file={munge / 'munged.log'}", f"--seed-file={munge / 'munged.seed'}",
        ])
        self._wait(lambda: (munge / "munge.socket").exists(), timeout_s, "munged socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-f", str(self.conf)])
        self._spawn("slurmd", ["slurmd", "-D", "-N", "localhost", "-f", str(self.conf)])
        self._wait(lambda: self.node_state() == "idle", timeout_s, "node localhost idle")

    def _wait(self, ready, timeout_s: float, what: str) -> None:
        def daemons_alive() -> None:
            for daemon in self.daemons:
                if daemon.poll() is not None:
                    raise SlurmUnavailable(f"{daemon.args[0]} exited ({daemon.returncode})\n"
                                           + self.logs())
        try:
            wait_until(ready, what, still=daemons_alive, timeout_s=timeout_s)
        except AssertionError as error:
            raise SlurmUnavailable(f"{error}\n{self.logs()}") from None

    def run(self, *command: str, check: bool = True, env: dict[str, str] | None = None) -> str:
        """A SLURM command's output (`env`: the environment it and, for sbatch, the job get)."""
        result = subprocess.run(command, env=env or self.env, capture_output=True, text=True,
                                timeout=30)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}: {result.stderr}")
        return result.stdout

    def node_state(self) -> str:
        try:
            return self.run("sinfo", "-h", "-n", "localhost", "-o", "%T", check=False).strip()
        except subprocess.TimeoutExpired:
            return ""

    def jobs(self) -> list[dict[str, str]]:
        """Every job the controller remembers (`scontrol -d show job`), as key -> value."""
        out = self.run("scontrol", "show", "job", "--details", "--oneliner")
        jobs = []
        for line in out.splitlines():
            if line.startswith("JobId="):
                jobs.append(dict(item.split("=", 1) for item in line.split() if "=" in item))
        return jobs

    def logs(self, tail: int = 3000) -> str:
        parts = []
        for path in sorted((self.root / "log").glob("*")) + [self.root / "munge" / "munged.log"]:
            if path.is_file():
                parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-tail:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        """Cancel leftover jobs, stop slurmd, slurmctld and munged by PID, then kill any process
        of the cluster still alive (self.leftovers)."""
        if self.daemons and all(d.poll() is None for d in self.daemons):
            try:
                self.run("scancel", "--full", "--user", str(os.getuid()), check=False)
                self._wait(lambda: not self.run("squeue", "-h", "-t", "RUNNING,COMPLETING",
                                                check=False).strip(), START_TIMEOUT_S,
                           "jobs to end")
            except (subprocess.TimeoutExpired, SlurmUnavailable):
                pass
        for daemon in reversed(self.daemons):
            if daemon.poll() is None:
                os.kill(daemon.pid, signal.SIGTERM)
                try:
                    daemon.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.kill(daemon.pid, signal.SIGKILL)
                    daemon.wait(timeout=15)
        self.daemons.clear()
        self.leftovers = end_all(CLUSTER_VARIABLE, str(self.root), grace_s=10)
        for log in self._outputs:
            log.close()
        self._outputs.clear()
