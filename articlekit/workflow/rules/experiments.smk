# One rule per entry of config `experiments:`, all from this one template:
# experiments/<name>.py -> results/<name>.json (+ its figures). The entry
# gives figures, libraries (their versions are params: an upgrade reruns
# it), threads (a count, or "all": the job runs alone and is told how many
# cores it got), mem_mb and runtime (the script refuses sizes whose
# footprint exceeds them, before any work; the plan has checked them already).
#
# An entry with runs: N (N > 1) is N jobs of rule <name>, one process each
# (results/runs/<name>/run-<i>.json), and one job of <name>_combine that
# makes them into results/<name>.json and draws its figures
# (articlekit/experiment/runs.py). The runs keep the experiment's rule name:
# --forcerun <name> reruns every run.
#
# A script that exits 0 without writing its artifact (it never called
# run_experiment) fails at once with the reason in its log
# (articlekit/experiment/unwritten.py), not after Snakemake's latency wait.
#
# The experiment's code runs in an empty scratch folder of its own
# (articlekit/experiment/scratch.py): nothing of the project is in reach of
# a relative path.


for experiment in PLAN.experiments:

    if experiment.repeated:

        rule:
            name:
                experiment.name
            input:
                code=experiment_code(experiment.name),
            output:
                json=experiment.run_pattern,
            log:
                f"logs/{experiment.name}/run-{{run}}.log",
            benchmark:
                f"benchmarks/out/{experiment.name}/run-{{run}}.tsv"
            wildcard_constraints:
                run=r"[1-9][0-9]*",
            threads: experiment_threads(experiment)
            resources:
                mem_mb=experiment.mem_mb,
                runtime=experiment.runtime,
            params:
                module=f"experiments.{experiment.name}",
                config=PLAN.params_json(experiment),
                threads=experiment_threads_argument(experiment),
                limits=experiment_limits_argument(experiment),
                versions=library_versions(experiment),
                libraries=PLAN.library_arguments(experiment),
            shell:
                "python -m {params.module} --params {params.config:q} {params.threads} {params.limits} "
                "--json {output.json} {params.libraries} --log {log} "
                "&& {{ test -e {output.json} || python -m articlekit.experiment.unwritten {params.module} "
                "--json {output.json} --log {log}; }}"

        rule:
            name:
                f"{experiment.name}_combine"
            input:
                runs=experiment.run_jsons,
                code=experiment_code(experiment.name),
            output:
                **figure_outputs(experiment),
                json=experiment.json,
            log:
                f"logs/{experiment.name}.log",
            benchmark:
                f"benchmarks/out/{experiment.name}.tsv"
            params:
                module=f"experiments.{experiment.name}",
                figures=PLAN.figure_arguments(experiment),
                libraries=PLAN.library_arguments(experiment),
                # each run held against Snakemake's record of it (no input: it changes on every job)
                ledger=PLAN.ledger,
            shell:
                "python -m {params.module} --combine {input.runs} --ledger {params.ledger} "
                "--json {output.json} {params.figures} {params.libraries} --log {log} "
                "&& {{ test -e {output.json} || python -m articlekit.experiment.unwritten {params.module} "
                "--json {output.json} --log {log}; }}"

    else:

        rule:
            name:
                experiment.name
            input:
                code=experiment_code(experiment.name),
            output:
                **figure_outputs(experiment),
                json=experiment.json,
            log:
                f"logs/{experiment.name}.log",
            benchmark:
                f"benchmarks/out/{experiment.name}.tsv"
            threads: experiment_threads(experiment)
            resources:
                mem_mb=experiment.mem_mb,
                runtime=experiment.runtime,
            params:
                module=f"experiments.{experiment.name}",
                config=PLAN.params_json(experiment),
                threads=experiment_threads_argument(experiment),
                limits=experiment_limits_argument(experiment),
                versions=library_versions(experiment),
                figures=PLAN.figure_arguments(experiment),
                libraries=PLAN.library_arguments(experiment),
            shell:
                "python -m {params.module} --params {params.config:q} {params.threads} {params.limits} "
                "--json {output.json} {params.figures} {params.libraries} --log {log} "
                "&& {{ test -e {output.json} || python -m articlekit.experiment.unwritten {params.module} "
                "--json {output.json} --log {log}; }}"
