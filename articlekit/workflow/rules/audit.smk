# Reviewers' outputs: published vs regenerated, and what moved since the
# last release.

from articlekit.review.matrix_input import matrix_argument


# Its summary, and every missing key or unexpected move, go to the terminal
# as well as to the log: a renamed key must not pass unseen.
rule audit:
    input:
        baseline=PLAN.baseline,
        code=command_code("audit"),
        values=PLAN.values,
        bindings=PLAN.bindings,
    output:
        json=PLAN.audit_json,
        md="build/audit.md",
        html=report("build/audit.html", caption="report/audit.rst", category="Audit"),
    log:
        "logs/audit.log",
    benchmark:
        "benchmarks/out/audit.tsv"
    localrule: True
    params:
        publishing=PLAN.publishing_json,
        # build/matrix.json with its digest, when the article has a matrix and
        # it ran: a param, not an input, so that the default build never runs
        # the matrix's own jobs (articlekit/review/matrix_input.py).
        matrix=lambda wildcards: matrix_argument(
            PLAN.matrix_json if PLAN.matrix else None
        ),
    shell:
        "python -m articlekit audit --baseline {input.baseline:q} --values {input.values:q} "
        "--bindings {input.bindings:q} --json {output.json:q} --md {output.md:q} --html {output.html:q} "
        "--publishing {params.publishing:q} {params.matrix} --log {log:q}"


# Compares with the newest releases/<label>/snapshot.json, or says "no release
# yet"; the baseline gives each key its agreement rule. A snapshot whose
# digest does not match (edited by hand) fails this rule, naming the entry.
rule diff:
    input:
        baseline=PLAN.baseline,
        code=command_code("diff"),
        values=PLAN.values,
        bindings=PLAN.bindings,
        release=latest_release,
    output:
        json="build/diff.json",
        md="build/diff.md",
    log:
        "logs/diff.log",
    benchmark:
        "benchmarks/out/diff.tsv"
    localrule: True
    params:
        publishing=PLAN.publishing_json,
    shell:
        "python -m articlekit diff --values {input.values:q} --bindings {input.bindings:q} "
        "--baseline {input.baseline:q} --json {output.json:q} --md {output.md:q} "
        "--publishing {params.publishing:q} {input.release:q} 2> {log:q}"


# No output on purpose: a release is asked for, never rebuilt because an
# input changed, and its snapshot is committed to the repo.
rule release:
    input:
        values=PLAN.values,
        bindings=PLAN.bindings,
        audit=PLAN.audit_json,
        # the editions it ships, whose digests it pins (verify --pin): a
        # later verify holds a build to the digests committed with it
        manifest=PLAN.manifest,
    log:
        "logs/release.log",
    localrule: True
    params:
        label=PLAN.release_label,
        releases=PLAN.releases,
        publishing=PLAN.publishing_json,
    shell:
        "python -m articlekit release --label {params.label:q} --values {input.values:q} "
        "--bindings {input.bindings:q} --audit {input.audit:q} --releases {params.releases:q} "
        "--publishing {params.publishing:q} 2> {log:q} && "
        "python -m articlekit verify --pin {params.label:q} --manifest {input.manifest:q} "
        "--releases {params.releases:q} 2>> {log:q}"
