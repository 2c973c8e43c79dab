# Reviewers' outputs: published vs regenerated, and what moved since the
# last release.

BASELINE = "baseline/published.yaml"
BASELINE_SCHEMA = "articlekit/baseline_schema.yaml"
# shell rules get no `code` rerun trigger: list the modules so that a fix to
# how values are judged redoes the audit and the diff.
# Modules both reports judge values with.
JUDGING_CODE = [
    "articlekit/agreement.py",
    "articlekit/baseline.py",
    "articlekit/claims.py",
    "articlekit/environment.py",
    "articlekit/fmt.py",
    "articlekit/jsonio.py",
    "articlekit/pages.py",
    "articlekit/publishing.py",
    "articlekit/values.py",
]
AUDIT_CODE = ["articlekit/audit.py", *JUDGING_CODE]
DIFF_CODE = ["articlekit/diff.py", "articlekit/release.py", *JUDGING_CODE]


# Its summary, and every missing key or unexpected move, go to the terminal
# as well as to the log: a renamed key must not pass unseen.
rule audit:
    input:
        baseline=BASELINE,
        schema=BASELINE_SCHEMA,
        code=AUDIT_CODE,
        values="build/values.json",
        bindings="build/bindings.json",
    output:
        json="build/audit.json",
        md="build/audit.md",
        html=report("build/audit.html", caption="../report/audit.rst", category="Audit"),
    log:
        "logs/audit.log",
    benchmark:
        "benchmarks/out/audit.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    params:
        publishing=PUBLISHING_JSON,
    shell:
        "python -m articlekit audit --baseline {input.baseline} --values {input.values} "
        "--bindings {input.bindings} --json {output.json} --md {output.md} --html {output.html} "
        "--publishing {params.publishing:q} --log {log}"


# Compares with the newest releases/<label>/snapshot.json, or says "no release
# yet"; the baseline gives each key its agreement rule.
rule diff:
    input:
        baseline=BASELINE,
        code=DIFF_CODE,
        values="build/values.json",
        bindings="build/bindings.json",
        release=latest_release,
    output:
        json="build/diff.json",
        md="build/diff.md",
    log:
        "logs/diff.log",
    benchmark:
        "benchmarks/out/diff.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    params:
        publishing=PUBLISHING_JSON,
    shell:
        "python -m articlekit diff --values {input.values} --bindings {input.bindings} "
        "--baseline {input.baseline} --json {output.json} --md {output.md} "
        "--publishing {params.publishing:q} {input.release} 2> {log}"


# No output on purpose: a release is asked for, never rebuilt because an
# input changed, and its snapshot is committed to the repo.
rule release:
    input:
        values="build/values.json",
        bindings="build/bindings.json",
        audit="build/audit.json",
    log:
        "logs/release.log",
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    params:
        label=RELEASE_LABEL,
        releases=RELEASES,
        publishing=PUBLISHING_JSON,
    shell:
        "python -m articlekit release --label {params.label} --values {input.values} "
        "--bindings {input.bindings} --audit {input.audit} --releases {params.releases} "
        "--publishing {params.publishing:q} 2> {log}"
