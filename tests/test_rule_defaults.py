"""What every rule shares is said once, and still reaches every job.

articlekit's rules list only what is their own: no `threads: 1` (Snakemake's
default), no `conda:` on each (the module gives its rules the article's
environment once), no mem_mb and runtime on the small steps (the cluster
profile's default-resources holds them once). These tests read Snakemake's
own plan (tests/snakemake_plan.py) of the project, the second article
(examples/summation) and the skeleton `articlekit new` writes, each without
a profile and through the cluster profiles, and check that nothing was lost:

- every job that runs a command runs in its article's environment.yml;
- an experiment's job has the threads, mem_mb and runtime its config entry
  declares (or the module's defaults), profile or none: its script checks
  its footprint against them;
- on a cluster every job has memory and time: its rule's own, else the
  profile's default-resources, and a profile's set-resources still apply;
- a cluster profile's default-resources (a site's partition and account)
  reach every job: the workflow profile profiles/default, which Snakemake
  reads on every run, would replace them whole if it had any.

The expectations are read from the configs and profiles, not typed here.
Dry runs only, forked from one process that imported Snakemake.
"""

import ast
import json
import shutil
from pathlib import Path

import pytest
import yaml

from articlekit.skeleton.new import new_article
from articlekit.workflow import settings
from tests.workspace import PROJECT_ROOT, copy_environment, copy_project

pytestmark = pytest.mark.slow

PLAN_PATCH = f"{Path(__file__).with_name('snakemake_plan.py')}:record_plan"
CLUSTER_PROFILES = ["profiles/slurm", "tests/slurm/profile"]
CORES = 3  # what a job that takes every core gets


@pytest.fixture(scope="module")
def articles(tmp_path_factory):
    """{name: folder} for a fresh copy of each article."""
    root = tmp_path_factory.mktemp("articles")
    skeleton = root / "skeleton"
    new_article(skeleton)
    return {
        "project": copy_project(root / "project"),
        "summation": copy_project(root / "summation", root=PROJECT_ROOT / "examples" / "summation"),
        "skeleton": skeleton,
    }


@pytest.fixture(scope="module")
def plan(server, tmp_path_factory):
    logs = tmp_path_factory.mktemp("plan-logs")
    count = [0]

    def plan(folder, *args):
        """Every job of the DAG, as {rule: [job, ...]}."""
        count[0] += 1
        out, log = logs / f"plan-{count[0]}.json", logs / f"plan-{count[0]}.log"
        # this checkout's articlekit, for the articles that are not the project
        env = {**copy_environment(PROJECT_ROOT if folder.name != "project" else folder), "SNAKEMAKE_PLAN": str(out)}
        code = server.start(folder, ["--dag", "--cores", str(CORES), *args], env, log, patch=PLAN_PATCH).wait(600)
        assert code == 0, f"snakemake --dag {' '.join(args)} in {folder} exited {code}:\n{log.read_text()[-4000:]}"
        jobs = {}
        for job in json.loads(out.read_text(encoding="utf-8"))["jobs"]:
            jobs.setdefault(job["rule"], []).append(job)
        return jobs

    return plan


def experiments(folder):
    config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    return settings.experiments(config)


def commands(jobs):
    return [job for rule_jobs in jobs.values() for job in rule_jobs if job["runs"]]


@pytest.mark.parametrize("name", ["project", "summation", "skeleton"])
def test_every_step_runs_in_the_articles_environment(articles, plan, name):
    folder = articles[name]
    jobs = commands(plan(folder))
    environment = str((folder / "environment.yml").resolve())
    assert jobs
    assert {job["rule"]: job["conda_env"] for job in jobs} == {job["rule"]: environment for job in jobs}


@pytest.mark.parametrize("name", ["project", "summation", "skeleton"])
def test_an_experiment_gets_what_its_entry_declares_profile_or_none(articles, plan, name):
    folder = articles[name]
    for profile in [[], *(["--profile", str(PROJECT_ROOT / p)] for p in CLUSTER_PROFILES)]:
        jobs = plan(folder, *profile)
        for experiment in experiments(folder):
            declared = (
                experiment.mem_mb,
                experiment.runtime,
                CORES if experiment.takes_every_core else experiment.threads,
            )
            assert jobs[experiment.name], experiment.name
            for job in jobs[experiment.name]:  # one, or one per run of an entry with runs: N
                assert (job["resources"]["mem_mb"], job["resources"]["runtime"], job["threads"]) == declared, (
                    experiment.name,
                    profile,
                )
                # the limits its script checks its footprint against
                limits = f"--mem-mb {experiment.mem_mb} --runtime {experiment.runtime}"
                assert json.loads(job["params"]["limits"]) == limits


@pytest.mark.parametrize("profile", CLUSTER_PROFILES)
def test_on_a_cluster_every_job_has_its_rules_resources_or_the_profiles(articles, plan, profile):
    folder = articles["project"]
    settings_of = yaml.safe_load((PROJECT_ROOT / profile / "config.yaml").read_text(encoding="utf-8"))
    defaults, per_rule = settings_of["default-resources"], settings_of.get("set-resources") or {}
    # by rule and outputs: a rule with wildcards (a sweep's chunk) has a job per experiment
    local = {(job["rule"], *job["output"]): job["resources"] for job in commands(plan(folder))}
    on_cluster = commands(plan(folder, "--profile", str(PROJECT_ROOT / profile)))
    assert {(job["rule"], *job["output"]) for job in on_cluster} == set(local)
    for job in on_cluster:
        own = local[(job["rule"], *job["output"])]  # what the rule names itself (a local run adds no defaults)
        for resource in ("mem_mb", "runtime"):
            assert job["resources"][resource] == own.get(resource, defaults[resource]), (job["rule"], resource)
        for resource, value in (per_rule.get(job["rule"]) or {}).items():
            assert job["resources"][resource] == as_snakemake_reads(value), (job["rule"], resource)


def as_snakemake_reads(value):
    """A profile's resource value: a quoted string is a Python expression
    ("'--exclusive'" is the text --exclusive), as on the command line."""
    try:
        return ast.literal_eval(value) if isinstance(value, str) else value
    except (ValueError, SyntaxError):
        return value


def test_a_sites_default_resources_reach_every_job(articles, plan, tmp_path):
    site = tmp_path / "site-profile"
    shutil.copytree(PROJECT_ROOT / "profiles/slurm", site)
    settings_of = yaml.safe_load((site / "config.yaml").read_text(encoding="utf-8"))
    settings_of["default-resources"].update(slurm_partition="compute", slurm_account="my_project")
    (site / "config.yaml").write_text(yaml.safe_dump(settings_of), encoding="utf-8")
    for job in commands(plan(articles["project"], "--profile", str(site))):
        assert (job["resources"].get("slurm_partition"), job["resources"].get("slurm_account")) == (
            "compute",
            "my_project",
        ), job["rule"]
