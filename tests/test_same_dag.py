"""benchmarks/same_dag.py: a built article's DAG as a Snakefile of touches,
the floor benchmarks/build.py measures each rebuild against."""

import ast

from benchmarks.same_dag import jobs, snakefile

SUMMARY = [
    "output_file\tdate\trule\tlog-file(s)\tinput-file(s)\tshellcmd\tstatus\tplan",
    # one job, two outputs: the same rule, log and inputs
    "results/scaling.json\t-\tscaling\tlogs/scaling.log\texperiments/scaling.py,config.yaml\t-\tok\tno update",
    "figures/scaling.svg\t-\tscaling\tlogs/scaling.log\tconfig.yaml,experiments/scaling.py\t-\tok\tno update",
    # the same rule again, another job (a wildcard rule's second instance)
    "results/timing.json\t-\tscaling\tlogs/timing.log\texperiments/scaling.py\t-\tok\tno update",
    "build/values.json\t-\tvalues\t-\tresults/scaling.json,results/timing.json\t-\tok\tno update",
]


def test_a_job_is_its_outputs_that_share_a_rule_a_log_and_inputs():
    found = sorted(jobs(SUMMARY))
    assert found == [
        (
            "scaling",
            ["figures/scaling.svg", "results/scaling.json"],
            ["config.yaml", "experiments/scaling.py"],
            "logs/scaling.log",
        ),
        ("scaling", ["results/timing.json"], ["experiments/scaling.py"], "logs/timing.log"),
        ("values", ["build/values.json"], ["results/scaling.json", "results/timing.json"], "-"),
    ]


def test_each_job_is_a_rule_of_its_own_that_touches_its_outputs_and_all_asks_for_every_output():
    text = snakefile(SUMMARY)
    rules = [line for line in text.splitlines() if line.startswith("rule ")]
    assert rules == ["rule all:", "rule scaling_0:", "rule scaling_1:", "rule values_2:"]
    assert text.count('"touch {output}"') == 3
    all_inputs = text.split("rule all:", 1)[1].split("rule scaling_0:", 1)[0]
    listed = ast.literal_eval(all_inputs.split("input:", 1)[1].strip().rstrip(","))
    assert listed == sorted(row.split("\t")[0] for row in SUMMARY[1:])
    # a job with no log has no log: directive
    assert "log:" not in text.split("rule values_2:", 1)[1]


def test_without_code_a_job_keeps_every_input_but_articlekits_files_and_python_modules():
    summary = [
        SUMMARY[0],
        "build/article.html\t-\thtml\t-\tarticle/index.qmd,articlekit/render/page.py,"
        "articlekit/render/page.css,/site/articlekit/core/log.py,experiments/attention.py,build/values.json\t-\tok\t-",
    ]
    [(_, _, inputs, _)] = jobs(summary, code=False)
    assert inputs == ["article/index.qmd", "build/values.json"]
    [(_, _, every, _)] = jobs(summary)
    assert len(every) == 6
