"""A throwaway one-node SLURM cluster on this machine, for the cluster test.

    with LocalSlurm() as cluster:
        cluster.run(["sinfo"])            # or subprocess.run(..., env=cluster.env)

Everything lives under one fresh folder: slurm.conf, state, spool, logs,
pid files and a private munge socket, so a system SLURM or munge (if any)
is neither used nor disturbed. The daemons run in the foreground as our own
children and are stopped by PID, never by name; should this process die
without cleaning up, the kernel sends them SIGTERM. Traffic stays on
127.0.0.1: the controller and the node listen there, on ports picked free.

Needs root (slurmd runs jobs as their submitter, munged as the munge user),
the Debian packages slurm-wlm and munge (.ci/install-slurm.sh), and no
systemd or cgroups: proctrack/linuxproc and task/none. There is no
accounting database, so `sacct` answers "accounting disabled"; clients must
ask `squeue`, which remembers finished jobs for MinJobAge seconds.
"""

import ctypes
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests.child_processes import popen

BINARIES = ["munged", "slurmctld", "slurmd", "sinfo", "squeue", "sbatch", "srun", "scancel", "scontrol"]
PARTITION = "debug"
# Seconds squeue keeps a finished job: at least 3x the first status check
# delay (the plugin's rule), and longer than a whole test module takes on a
# busy machine, since the tests read the jobs that ran from squeue at the end
# (no accounting database). At SLURM's default of 300 s, a 7-minute build
# under load had already lost its first jobs.
MIN_JOB_AGE = 7200
START_TIMEOUT = 60
STOP_TIMEOUT = 10
COMMAND_TIMEOUT = 20


class SlurmUnavailable(RuntimeError):
    """The local cluster cannot run here; the message says why."""


def missing_requirements():
    """Why a local cluster cannot start here, or None when it can try."""
    missing = [name for name in BINARIES if not _which(name)]
    if missing:
        return f"missing {', '.join(missing)} (install with .ci/install-slurm.sh)"
    if os.geteuid() != 0:
        return "needs root to run slurmd and to start munged as the munge user"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "no 'munge' user (the munge package creates it)"
    return None


def _which(name):
    # The daemons live in /usr/sbin, which a non-login PATH may lack.
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _memory_mb():
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    raise SlurmUnavailable("cannot read MemTotal from /proc/meminfo")


def _die_with_parent():
    """In the child before exec: SIGTERM when the process that started it dies."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _tail(path, lines=25):
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return f"({path} not written)"
    return "\n".join(text[-lines:]) or f"({path} is empty)"


class LocalSlurm:
    """One controller, one node (this host, CPUs = its cores), one partition."""

    def __init__(self, root=None, cpus=None, memory_mb=None):
        # munged refuses a socket whose parent folders it cannot walk as the
        # munge user (pytest's /tmp/pytest-of-root is 0700): default to a
        # fresh folder directly in the system temp dir, removed by stop().
        self._owns_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="afs-slurm-")).resolve()
        self.node = socket.gethostname().split(".")[0]
        self.cpus = cpus or os.cpu_count() or 1
        # slurmd drains a node that claims more memory than it has: stay under.
        self.memory_mb = memory_mb or int(_memory_mb() * 0.8)
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.socket"
        self._procs = {}  # name -> Popen, in start order
        self._logs = {}  # name -> the file its stdout goes to
        self.bin = self.root / "bin"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.env["PATH"] = f"{self.bin}:{self.env.get('PATH', '')}:/usr/sbin:/sbin"

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        reason = missing_requirements()
        if reason:
            raise SlurmUnavailable(reason)
        self._prepare_dirs()
        self._start_munge()
        self._write_conf()
        self._spawn("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(self.conf)])
        self._wait(self._controller_answers, "slurmctld to answer `scontrol ping`", "slurmctld")
        self._spawn("slurmd", [_which("slurmd"), "-D", "-N", self.node, "-f", str(self.conf)])
        self._wait(self._node_idle, f"node {self.node} to be idle in `sinfo`", "slurmd")

    def stop(self):
        """Cancel our jobs, then stop the daemons newest first; never raises."""
        if self._procs.get("slurmctld") and self._procs["slurmctld"].poll() is None:
            try:
                self.run(["scancel", "--full", f"--partition={PARTITION}"], check=False)
                deadline = time.monotonic() + STOP_TIMEOUT
                while (
                    time.monotonic() < deadline
                    and self.run(
                        ["squeue", "-h", "-t", "RUNNING,COMPLETING,PENDING", "-o", "%i"], check=False
                    ).stdout.strip()
                ):
                    time.sleep(0.5)
            except Exception:  # teardown goes on regardless
                pass
        for name, proc in reversed(list(self._procs.items())):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=STOP_TIMEOUT)
        for log in self._logs.values():
            log.close()
        self._procs.clear()
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- use ---------------------------------------------------------------

    def run(self, args, check=True, timeout=COMMAND_TIMEOUT):
        """Run a SLURM client command against this cluster."""
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout, check=check)

    def jobs(self):
        """Every job squeue still remembers (MinJobAge): dicts of its fields."""
        keys = ("id", "name", "state", "cpus", "oversubscribe", "workdir", "comment")
        out = self.run(["squeue", "-h", "-t", "all", "-o", "%i|%j|%T|%C|%h|%Z|%k"]).stdout
        return [dict(zip(keys, line.split("|", len(keys) - 1))) for line in out.splitlines() if line]

    def describe(self):
        """The daemons' log tails, for a failure message."""
        # munged in the foreground logs to its stdout.
        logs = [self.root / "munged.stdout", self.root / "slurmctld.log", self.root / "slurmd.log"]
        return "\n".join(f"--- {log}:\n{_tail(log)}" for log in logs)

    # -- internals ---------------------------------------------------------

    def _prepare_dirs(self):
        self.root.mkdir(parents=True, exist_ok=True)
        # munged (as munge) and the job steps must traverse the folder.
        self.root.chmod(0o755)
        for sub in ("state", "spool", "bin"):
            (self.root / sub).mkdir(exist_ok=True)
        self._write_srun_wrapper()
        munge_dir = self.munge_socket.parent
        munge_dir.mkdir(exist_ok=True)
        munge = pwd.getpwnam("munge")
        os.chown(munge_dir, munge.pw_uid, munge.pw_gid)
        munge_dir.chmod(0o755)

    def _write_srun_wrapper(self):
        # Inside a job, snakemake-executor-plugin-slurm-jobstep (0.6.1) starts
        # the rule with `srun` after deleting every SLURM_* variable but a few
        # job ids, SLURM_CONF included; srun then looks for /etc/slurm and
        # fails ("Could not establish a configuration source"). A real cluster
        # keeps its slurm.conf there; this one puts it back for srun.
        wrapper = self.bin / "srun"
        conf, srun = shlex.quote(str(self.conf)), shlex.quote(_which("srun"))
        wrapper.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {srun} "$@"\n')
        wrapper.chmod(0o755)

    def _munge_key(self):
        system_key = Path("/etc/munge/munge.key")
        if system_key.exists():
            return system_key
        key = self.root / "munge" / "munge.key"
        if not key.exists():
            mungekey = _which("mungekey")
            if not mungekey:
                raise SlurmUnavailable("no /etc/munge/munge.key and no mungekey to create one")
            subprocess.run(
                [mungekey, "--create", "--keyfile", str(key)], check=True, capture_output=True, timeout=COMMAND_TIMEOUT
            )
            munge = pwd.getpwnam("munge")
            os.chown(key, munge.pw_uid, munge.pw_gid)
            key.chmod(0o600)
        return key

    def _start_munge(self):
        munge_dir = self.munge_socket.parent
        args = [
            _which("munged"),
            "--foreground",
            f"--socket={self.munge_socket}",
            f"--key-file={self._munge_key()}",
            f"--pid-file={munge_dir / 'munged.pid'}",
            f"--seed-file={munge_dir / 'munged.seed'}",
        ]
        munge = pwd.getpwnam("munge")
        self._spawn("munged", args, user=munge.pw_uid, group=munge.pw_gid)
        self._wait(self.munge_socket.exists, f"munged to create {self.munge_socket}", "munged")

    def _write_conf(self):
        r = self.root
        mem_per_cpu = max(100, self.memory_mb // self.cpus)
        self.conf.write_text(f"""\
# Written by tests/slurm_cluster.py for one test run; deleted with it.
ClusterName=afs-test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
CommunicationParameters=NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}
SlurmctldPidFile={r / 'slurmctld.pid'}
SlurmdPidFile={r / 'slurmd.pid'}
SlurmctldLogFile={r / 'slurmctld.log'}
SlurmdLogFile={r / 'slurmd.log'}
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU={mem_per_cpu}
MinJobAge={MIN_JOB_AGE}
ReturnToService=2
SchedulerType=sched/builtin
NodeName={self.node} NodeAddr=127.0.0.1 NodeHostname={self.node} CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN
PartitionName={PARTITION} Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
""")

    def _spawn(self, name, args, **kwargs):
        # The daemons also log to their own files; this catches what they
        # print before those are open (bad config, missing key).
        out = open(self.root / f"{name}.stdout", "w")
        self._logs[name] = out
        self._procs[name] = popen(  # stop() ends them with SIGTERM: its default disposition restored
            args,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            **kwargs,
        )

    def _wait(self, ready, what, name, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        proc = self._procs[name]
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SlurmUnavailable(
                    f"{name} exited with status {proc.returncode} while waiting for {what}:\n"
                    f"{_tail(self.root / f'{name}.stdout')}\n{_tail(self.root / f'{name}.log')}"
                )
            try:
                if ready():
                    return
            except (subprocess.SubprocessError, OSError):
                pass
            time.sleep(0.3)
        raise SlurmUnavailable(
            f"timed out after {timeout} s waiting for {what}:\n{_tail(self.root / f'{name}.stdout')}\n{self.describe()}"
        )

    def _controller_answers(self):
        return self.run(["scontrol", "ping"], check=False, timeout=5).stdout.find("UP") >= 0

    def _node_idle(self):
        out = self.run(["sinfo", "-h", "-N", "-n", self.node, "-o", "%T"], check=False, timeout=5)
        return out.stdout.strip() == "idle"
