"""What a Snakemake run would do, and everything needed to say what it should do.

`snakemake --dag` builds the DAG of jobs and prints it. With `record_plan()`
installed first, it writes instead, to the file named by $SNAKEMAKE_PLAN:

    {"jobs": [{"rule", "input": [...], "output": [...], "params": {...},
               "resources": {...}, "threads", "conda_env", "runs", "shell"}, ...],
     "scheduled": [rule, ...]}

`jobs` is every job of the DAG, whether it needs to run or not, with its
params evaluated as the job would see them (those Snakemake treats as
derived included: the point is to compare them independently of Snakemake's
own rerun triggers), its resources and threads as the executor would
read them, its rule's conda environment, whether it runs a command (`rule all`
does not) and the rule's shell command, unformatted; `scheduled` is the rules of the jobs Snakemake decided
to run, exactly what a dry run would list.

It patches Snakemake's own `Workflow.printdag`, so the command line, the
profile and the config are read as a real run reads them. Used through the
fork server (tests/snakemake_fork.py, request field "patch"), one import of
Snakemake serves every plan.
"""

import json
import os


def _job(job):
    return {
        "rule": job.rule.name,
        "input": sorted(map(str, job.input)),
        "output": sorted(map(str, job.output)),
        "params": {name: json.dumps(value, sort_keys=True, default=str) for name, value in job.params.items()},
        "resources": {
            name: value if isinstance(value, (int, float)) else str(value)
            for name, value in job.resources.items()
            if not name.startswith("_")
        },
        "threads": job.threads,
        "conda_env": None if job.rule.conda_env is None else str(job.rule.conda_env),
        "runs": not job.rule.norun,
        "shell": job.rule.shellcmd,
    }


def record_plan():
    from snakemake.workflow import Workflow

    def printdag(self):
        # as Workflow.printdag prepares the DAG, but without --forceall: the
        # jobs that need to run are Snakemake's real decision
        self._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True)
        self._build_dag()
        plan = {
            "jobs": sorted((_job(job) for job in self.dag.jobs), key=lambda j: (j["rule"], j["output"])),
            "scheduled": sorted({job.rule.name for job in self.dag.needrun_jobs()}),
        }
        with open(os.environ["SNAKEMAKE_PLAN"], "w", encoding="utf-8") as f:
            json.dump(plan, f, indent=1)

    Workflow.printdag = printdag
