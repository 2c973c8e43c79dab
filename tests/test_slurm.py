"""On a cluster: the fast build through SLURM gives the local build's artifacts.

A one-node SLURM cluster is started on this machine (tests/slurm_cluster.py),
the workflow runs through the test profile (tests/slurm/profile, the fast
twin of profiles/slurm), and again locally in a second copy. Every artifact
must agree, except what may differ between any two builds (timings, date,
host, executor), and every rule must have run as its own SLURM job.

Skipped, with the reason, where SLURM or munge is missing or cannot start;
with REQUIRE_SLURM=1 (CI, after .ci/install-slurm.sh) that is a failure.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.workspace import copy_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slurm_cluster import LocalSlurm, SlurmUnavailable, missing_requirements  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.slurm]

FAST = ["--configfile", "config/test.yaml"]
PROFILE = "tests/slurm/profile"
# Both builds get every core of this machine, the test cluster's one node.
# (Inside a SLURM job the rule runs under `snakemake --cores all`, which
# counts the CPUs the job may use: with the test cluster's task/none, all of
# the node's. Equal cores keep the timing rule's threads param equal.)
CORES = os.cpu_count() or 1
# Typical on a quiet 2-core machine: about a minute locally, three through
# SLURM (its status polling backs off by 10 s whenever no job has finished
# yet); the limits leave room for a busy machine: they catch a hang, not a
# slow build.
LOCAL_TIMEOUT = 300
SLURM_TIMEOUT = 600

# What two correct builds may disagree on.
VOLATILE_ENVIRONMENT = {"build_date", "build_time_utc", "executor", "slurm_job_id", "hostname"}
TIMED = {"results/timing.json"}  # values are measurements; params/versions must agree
TIMED_FIGURES = {"figures/timing-sweep.svg"}

FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")


def unavailable(reason):
    message = f"local SLURM cluster unavailable: {reason}"
    if os.environ.get("REQUIRE_SLURM") == "1":
        pytest.fail(message + "\n(REQUIRE_SLURM=1: run .ci/install-slurm.sh first)", pytrace=False)
    print(message, file=sys.stderr)
    pytest.skip(message)


@pytest.fixture(scope="module")
def cluster():
    reason = missing_requirements()
    if reason:
        unavailable(reason)
    local_slurm = None
    try:
        local_slurm = LocalSlurm(cpus=CORES)
        local_slurm.start()
    except (SlurmUnavailable, OSError, subprocess.SubprocessError) as error:
        if local_slurm:
            local_slurm.stop()
        unavailable(error)
    try:
        yield local_slurm
    finally:
        local_slurm.stop()


def snakemake(workdir, args, env, timeout):
    """Run snakemake in workdir; kill its whole process group on timeout."""
    env = dict(env, PYTHONPATH=str(workdir))  # the copy's code, not the editable install's
    cmd = ["snakemake", *args, "--cores", str(CORES), *FAST]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"`{' '.join(cmd)}` still running after {timeout} s in {workdir}:\n{out[-4000:]}")
    seconds = time.monotonic() - start
    print(f"{' '.join(cmd)}: {seconds:.1f} s", file=sys.stderr)
    if proc.returncode != 0:
        pytest.fail(f"`{' '.join(cmd)}` failed ({proc.returncode}) in {workdir}:\n{out[-6000:]}")
    return out


@pytest.fixture(scope="module")
def local_build(tmp_path_factory):
    work = copy_project(tmp_path_factory.mktemp("local") / "project")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    out = snakemake(work, [], env, LOCAL_TIMEOUT)
    return work, set(FINISHED.findall(out)) - {"all"}


@pytest.fixture(scope="module")
def slurm_build(tmp_path_factory, cluster):
    work = copy_project(tmp_path_factory.mktemp("cluster") / "project")
    try:
        out = snakemake(work, ["--profile", PROFILE], cluster.env, SLURM_TIMEOUT)
    except BaseException:
        print(cluster.describe(), file=sys.stderr)
        raise
    return work, out


def artifacts(root):
    """Every file the build wrote under results/, figures/ and build/, relative."""
    return sorted(
        str(p.relative_to(root)) for folder in ("results", "figures", "build")
        for p in (root / folder).rglob("*") if p.is_file()
    )


def comparable(path, root):
    data = json.loads((root / path).read_text())
    if path == "results/environment.json":
        for key in VOLATILE_ENVIRONMENT:
            data["values"].pop(key, None)
    if path in TIMED:
        data["values"] = sorted(data["values"])  # same measurements taken, not same times
    return data


def test_the_cluster_build_writes_what_the_local_build_writes(cluster, local_build, slurm_build):
    local, _ = local_build
    remote, _ = slurm_build
    assert artifacts(remote) == artifacts(local)
    for path in (p for p in artifacts(local) if p.startswith("results/")):
        assert comparable(path, remote) == comparable(path, local), path
    for path in (p for p in artifacts(local) if p.startswith("figures/") and p not in TIMED_FIGURES):
        assert (remote / path).read_bytes() == (local / path).read_bytes(), path


def slurm_rule(job):
    """The rule a SLURM job ran, from the comment the plugin gives it:
    rule_NAME, or rule_NAME_wildcards_VALUES for a rule with wildcards."""
    return job["comment"].removeprefix("rule_").split("_wildcards_")[0]


def test_every_rule_ran_as_its_own_slurm_job(cluster, local_build, slurm_build):
    _, rules = local_build
    remote, _ = slurm_build
    assert rules, "the local build ran no rule"
    jobs = cluster.jobs()
    completed = {slurm_rule(job) for job in jobs if job["state"] == "COMPLETED"}
    for rule in sorted(rules):
        assert rule in completed, f"no completed SLURM job for rule {rule}: {jobs}"
        # The plugin's per-job SLURM log, written by slurmd on the node (a
        # rule with wildcards: one folder further down, per wildcard values).
        assert list((remote / ".snakemake/slurm_logs" / f"rule_{rule}").rglob("*.log")), rule
    environment = json.loads((remote / "results/environment.json").read_text())["values"]
    assert environment["executor"] == "slurm"
    assert environment["slurm_job_id"] in {job["id"] for job in jobs}


def test_the_timing_rule_gets_a_node_to_itself(cluster, local_build, slurm_build):
    _, rules = local_build
    if "timing" not in rules:
        pytest.skip("the build has no timing rule")
    timing = [job for job in cluster.jobs() if job["comment"] == "rule_timing"]
    assert timing and all(job["oversubscribe"] == "NO" for job in timing), timing


def test_the_seed_sweep_through_slurm_gives_the_local_sweep_one_job_per_chunk(cluster, local_build, slurm_build):
    """The article binds the sweep's keys, so both builds ran it (config/test.yaml's
    robustness: a few seeds): each chunk its own SLURM job, each chunk and the
    summary equal to the local run's (a sweep holds no timings)."""
    local, _ = local_build
    remote, _ = slurm_build
    chunks = sorted(str(p.relative_to(local)) for p in (local / "results/robustness").glob("*/chunk-*.json"))
    assert chunks, "the local build ran no sweep"
    for path in [*chunks, "build/robustness.json"]:
        assert json.loads((remote / path).read_text()) == json.loads((local / path).read_text()), path
    assert (remote / "build/robustness.md").read_text() == (local / "build/robustness.md").read_text()
    completed = [job for job in cluster.jobs()
                 if slurm_rule(job) == "robustness_chunk" and job["state"] == "COMPLETED"]
    assert len(completed) == len(chunks), completed
