"""On a cluster: the fast build through SLURM gives the local build's artifacts.

A one-node SLURM cluster is started on this machine (tests/slurm_cluster.py),
the workflow runs through the test profile (tests/slurm/profile, the fast
twin of profiles/slurm), and again locally in a second copy. Every artifact
must agree, except what may differ between any two builds (timings, date,
host, executor), every rule but articlekit's quick steps must have run as
its own SLURM job, and those steps where Snakemake runs (docs/cluster.md).

The version matrix likewise (`snakemake matrix` on tests/slurm/matrix.yaml,
one environment, in two copies of the local build, one run through SLURM
and one locally, both beside the build through SLURM): each cell (one
experiment in one environment) a SLURM job, the environments made where
Snakemake runs, the results the local run's.

Skipped, with the reason, where SLURM or munge is missing or cannot start;
with REQUIRE_SLURM=1 (CI, after .ci/install-slurm.sh) that is a failure.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from tests.shared_build import copy_of_test_build
from tests.workspace import TEST_BUILD, copy_project, merged_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slurm_cluster import LocalSlurm, SlurmUnavailable, missing_requirements  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.slurm]

FAST = ["config/test.yaml"]
PROFILE = "tests/slurm/profile"
MATRIX = [*FAST, "tests/slurm/matrix.yaml"]
# Both builds get every core of this machine, the test cluster's one node.
# (Inside a SLURM job the rule runs under `snakemake --cores all`, which
# counts the CPUs the job may use: with the test cluster's task/none, all of
# the node's. Equal cores keep the timing rule's threads param equal.)
CORES = os.cpu_count() or 1
# The Snakemake that submits to the test cluster polls its status every 1 s,
# without the plugin's back-off of 10 s more after each poll that finds no
# job finished, meant for a real cluster (tests/slurm/fast_polling, its
# sitecustomize.py, says why; tests/test_slurm_polling.py that it holds).
FAST_POLLING = Path(__file__).resolve().parent / "slurm" / "fast_polling"
# Typical on a quiet 2-core machine: about a minute locally, two through
# SLURM; the limits leave room for a busy machine: they catch a hang, not a
# slow build.
LOCAL_TIMEOUT = 300
SLURM_TIMEOUT = 600

# What two correct builds may disagree on.
VOLATILE_ENVIRONMENT = {"build_date", "build_time_utc", "executor", "slurm_job_id", "hostname"}
TIMED = {"results/timing.json"}  # values are measurements; params/versions must agree
TIMED_RUNS = "results/runs/timing/"  # and each of its runs
TIMED_FIGURES = {"figures/timing-sweep.svg", "figures/timing-runs.svg"}

FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")
# articlekit's quick steps, local rules (articlekit/workflow/Snakefile says why):
# the submitting Snakemake runs them, as it would on a login node.
QUICK_STEPS = {
    "values",
    "lint_article",
    "bind",
    "parse_article",
    "listings",
    "audit",
    "diff",
    "release",
    "manifest",
    "journal_bundle",
    "robustness_summary",
    "robustness_report",
}


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


def snakemake(workdir, args, env, timeout, configfiles=FAST, python_path=()):
    """Run snakemake in workdir; kill its whole process group on timeout."""
    # the copy's code, not the editable install's
    env = dict(env, PYTHONPATH=os.pathsep.join([str(workdir), *map(str, python_path)]))
    # one --configfile for them all: a second would replace the first; strict=false
    # as in TEST_BUILD, so that the local build may be the run's shared one
    cmd = ["snakemake", *args, "--cores", str(CORES), "--configfile", *configfiles, "--config", "strict=false"]
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
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


def local_environment():
    """os.environ without SLURM's variables: a run that is not a SLURM job."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}


def run_locally(work, args, configfiles=FAST):
    """snakemake ARGS in the copy work -> its output."""
    return snakemake(work, args, local_environment(), LOCAL_TIMEOUT, configfiles)


def run_on_the_cluster(work, cluster, args, configfiles=FAST):
    """snakemake ARGS --profile PROFILE in the copy work -> its output; on
    failure, the daemons' logs too."""
    try:
        return snakemake(work, [*args, "--profile", PROFILE], cluster.env, SLURM_TIMEOUT, configfiles, [FAST_POLLING])
    except BaseException:
        print(cluster.describe(), file=sys.stderr)
        raise


@pytest.fixture(scope="module")
def local_build(tmp_path_factory):
    """(copy, the rules it ran): the default target built locally in a fresh
    copy: the run's one TEST_BUILD (tests/shared_build.py) where it has this
    machine's cores, so that both builds give the timing rule equal threads."""
    if TEST_BUILD == ("snakemake", "--cores", str(CORES), "--configfile", *FAST, "--config", "strict=false"):
        built = copy_of_test_build(tmp_path_factory)
        return built.project, set(FINISHED.findall(built.output)) - {"all"}
    work = copy_project(tmp_path_factory.mktemp("local") / "project")
    return work, set(FINISHED.findall(run_locally(work, []))) - {"all"}


def build_on_the_cluster(cluster, tmp_path_factory):
    """(copy, Snakemake's output): the default target built through SLURM in a fresh copy."""
    work = copy_project(tmp_path_factory.mktemp("cluster") / "project")
    return work, run_on_the_cluster(work, cluster, [])


@pytest.fixture(scope="module")
def runs(request, cluster, tmp_path_factory):
    """{name: future} of the module's three long runs, all started by the
    first test that asks for any: the build through SLURM (minutes, most
    of them spent waiting on the cluster's jobs one after another), and
    the version matrix through SLURM and locally, each in a copy of the
    local build. None reads another's copy, so each runs beside the others
    instead of after them; each test waits for the ones it reads, and
    fails with the run's own message where one failed."""
    tmp_path_factory.getbasetemp()  # made here, before two threads could each make one
    pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="slurm-test-run")
    futures = {"slurm_build": pool.submit(build_on_the_cluster, cluster, tmp_path_factory)}
    try:
        # the run's shared build, which another worker may be making: waited for here,
        # while the cluster builds
        local = request.getfixturevalue("local_build")[0]
        futures["slurm_matrix"] = pool.submit(matrix_on_the_cluster, local, cluster, tmp_path_factory)
        futures["local_matrix"] = pool.submit(matrix_locally, local, tmp_path_factory)
        yield futures
    finally:
        pool.shutdown(wait=True)  # each run ends by its timeout at the latest (snakemake())


@pytest.fixture(scope="module")
def slurm_build(runs):
    """(copy, Snakemake's output): the default target built through SLURM in a fresh copy."""
    return runs["slurm_build"].result()


def artifacts(root):
    """Every file the build wrote under results/, figures/ and build/, relative."""
    return sorted(
        str(p.relative_to(root))
        for folder in ("results", "figures", "build")
        for p in (root / folder).rglob("*")
        if p.is_file()
    )


def comparable(path, root):
    data = json.loads((root / path).read_text())
    if Path(path).name == "environment.json":  # the main build's, or a matrix cell's
        for key in VOLATILE_ENVIRONMENT:
            data["values"].pop(key, None)
    if path in TIMED or path.startswith(TIMED_RUNS):
        data["values"] = sorted(data["values"])  # same measurements taken, not same times
    return data


# slurm_build is asked for before local_build: the run's shared build, which
# another worker may be making, is then most likely made when it is wanted.
def test_the_cluster_build_writes_what_the_local_build_writes(cluster, slurm_build, local_build):
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


def test_every_rule_but_the_quick_steps_ran_as_its_own_slurm_job(cluster, slurm_build, local_build):
    _, rules = local_build
    remote, output = slurm_build
    assert rules, "the local build ran no rule"
    jobs = [job for job in cluster.jobs() if Path(job["workdir"]).resolve() == remote.resolve()]
    completed = {slurm_rule(job) for job in jobs if job["state"] == "COMPLETED"}
    # the quick steps ran in the submitting Snakemake (its log says `localrule`, as for
    # the target rule `all`, which runs nothing), none as a job
    assert set(re.findall(r"^localrule (\w+):", output, re.M)) - {"all"} == rules & QUICK_STEPS != set()
    assert not {slurm_rule(job) for job in jobs} & QUICK_STEPS, jobs
    for rule in sorted(rules - QUICK_STEPS):
        assert rule in completed, f"no completed SLURM job for rule {rule}: {jobs}"
        # The plugin's per-job SLURM log, written by slurmd on the node (a
        # rule with wildcards: one folder further down, per wildcard values).
        assert list((remote / ".snakemake/slurm_logs" / f"rule_{rule}").rglob("*.log")), rule
    environment = json.loads((remote / "results/environment.json").read_text())["values"]
    assert environment["executor"] == "slurm"
    assert environment["slurm_job_id"] in {job["id"] for job in jobs}


def test_the_timing_rule_gets_a_node_to_itself(cluster, slurm_build, local_build):
    _, rules = local_build
    if "timing" not in rules:
        pytest.skip("the build has no timing rule")
    # Slurm's comment is rule_<name>, or rule_<name>_wildcards_<values> for a
    # rule with wildcards (each of timing's runs is one job of it, {run}).
    timing = [
        job
        for job in cluster.jobs()
        if job["comment"] == "rule_timing" or job["comment"].startswith("rule_timing_wildcards_")
    ]
    assert timing and all(job["oversubscribe"] == "NO" for job in timing), cluster.jobs()


# ---- the version matrix ------------------------------------------------------------


def copy_of_build(build, tmp_path_factory, name):
    """A copy of a built project, mtimes kept, so that Snakemake finds the
    build up to date: `snakemake matrix` there runs only the matrix's own
    jobs, not again the timing, the sweep and the listings its columns take
    from the main build (tests/test_matrix.py runs it in a copy of the
    run's shared build too). Both matrices start from the local build, so
    that the one through SLURM need not wait for the build through SLURM;
    each of their cells is a job of its own all the same."""
    work = tmp_path_factory.mktemp(name) / "project"
    shutil.copytree(build, work, symlinks=True)
    return work


def only_the_matrix_ran(out):
    """A matrix run in a copy of a build must not build it again: that
    would cost this module minutes and prove nothing new."""
    again = sorted({rule for rule in FINISHED.findall(out) if not rule.startswith("matrix")})
    assert not again, f"`snakemake matrix` in a built copy ran the build's rules {again} again:\n{out[-3000:]}"


def matrix_locally(local, tmp_path_factory):
    work = copy_of_build(local, tmp_path_factory, "matrix-local")
    only_the_matrix_ran(run_locally(work, ["matrix"], MATRIX))
    return work


def matrix_on_the_cluster(local, cluster, tmp_path_factory):
    work = copy_of_build(local, tmp_path_factory, "matrix-cluster")
    only_the_matrix_ran(run_on_the_cluster(work, cluster, ["matrix"], MATRIX))
    return work


@pytest.fixture(scope="module")
def local_matrix(runs):
    return runs["local_matrix"].result()


@pytest.fixture(scope="module")
def slurm_matrix(runs):
    return runs["slurm_matrix"].result()


def matrix_config(root):
    with open(root / "tests/slurm/matrix.yaml", encoding="utf-8") as f:
        matrix = yaml.safe_load(f)["matrix"]
    experiments = [name for name in merged_config(root)["experiments"] if name not in matrix["exclude"]]
    return matrix["environments"], experiments


def matrix_rows(root):
    """build/matrix.json without the rows of where and when it ran."""
    matrix = json.loads((root / "build/matrix.json").read_text())
    matrix["rows"] = [
        row for row in matrix["rows"] if row["key"] not in {f"environment.{key}" for key in VOLATILE_ENVIRONMENT}
    ]
    return matrix


def test_the_matrix_through_slurm_gives_the_local_matrix(cluster, local_matrix, slurm_matrix):
    def results(root):
        return sorted(str(p.relative_to(root)) for p in (root / "results/matrix").rglob("*") if p.is_file())

    cells = results(local_matrix)
    environments, experiments = matrix_config(local_matrix)
    assert len(cells) == len(environments) * (len(experiments) + 2)  # + its lock and what it installed
    assert results(slurm_matrix) == cells
    for path in (p for p in cells if p.endswith(".json")):
        assert comparable(path, slurm_matrix) == comparable(path, local_matrix), path
    for path in (p for p in cells if p.endswith(".lock")):
        assert (slurm_matrix / path).read_text() == (local_matrix / path).read_text(), path
    # the page's own data: every claim, text and value of the article, judged alike
    remote, local = matrix_rows(slurm_matrix), matrix_rows(local_matrix)
    assert local["rows"] and local["left_out"] == ["listings", "robustness", "timing"]
    assert [row["key"] for row in remote["rows"]] == [row["key"] for row in local["rows"]]
    differing = [(l_row, r_row) for l_row, r_row in zip(local["rows"], remote["rows"]) if l_row != r_row]
    assert not differing, "\n".join(f"local {l_row}\ncluster {r_row}" for l_row, r_row in differing[:3])
    assert {k: v for k, v in remote.items() if k != "rows"} == {k: v for k, v in local.items() if k != "rows"}
    assert all(env["complete"] and env["claims_held"] > 0 for env in local["environments"])


def test_each_matrix_cell_ran_as_its_own_slurm_job_in_its_environment(cluster, slurm_matrix):
    environments, experiments = matrix_config(slurm_matrix)
    logs = slurm_matrix / ".snakemake/slurm_logs"
    for environment in environments:
        label = environment["label"]
        numpy = next(pin.split("==")[1] for pin in environment["pins"] if pin.startswith("numpy=="))
        for experiment in experiments:
            # the plugin's per-job log, written by slurmd on the node
            assert list((logs / "rule_matrix_experiment" / f"{label}_{experiment}").glob("*.log")), experiment
            cell = json.loads((slurm_matrix / f"results/matrix/{label}/{experiment}.json").read_text())
            assert cell["versions"]["numpy"] == numpy, experiment  # in its environment, not the main one
        where = json.loads((slurm_matrix / f"results/matrix/{label}/environment.json").read_text())["values"]
        assert where["executor"] == "slurm" and where["slurm_job_id"] in {
            log.stem for log in (logs / "rule_matrix_experiment" / f"{label}_environment").glob("*.log")
        }
        assert list((logs / "rule_matrix_column" / label).glob("*.log"))
        # Made where Snakemake runs (the login node reaches the package index),
        # bytecode and all, so that no cell compiles torch again on import.
        venv = slurm_matrix / ".venv-matrix" / label
        assert list(venv.glob("lib/python*/site-packages/torch/__pycache__/__init__.*.pyc"))
    assert list((logs / "rule_matrix_report").glob("*.log"))
    made_here = {"matrix_lock", "matrix_env", "matrix"}
    assert not made_here & {d.name.removeprefix("rule_") for d in logs.iterdir()}, sorted(logs.iterdir())


def test_the_seed_sweep_through_slurm_gives_the_local_sweep_one_job_per_chunk(cluster, slurm_build, local_build):
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
    # This build's jobs, not those of another copy on the same cluster.
    completed = [
        job
        for job in cluster.jobs()
        if slurm_rule(job) == "robustness_chunk"
        and job["state"] == "COMPLETED"
        and Path(job["workdir"]).resolve() == remote.resolve()
    ]
    assert len(completed) == len(chunks), completed
