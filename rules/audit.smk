# Reviewers' outputs: published vs regenerated, and what moved since the
# last release.

BASELINE = "baseline/published.yaml"


rule audit:
    input:
        baseline=BASELINE,
        values="build/values.json",
        bindings="build/bindings.json",
    output:
        json="build/audit.json",
        md="build/audit.md",
        html=report("build/audit.html", caption="../report/audit.rst", category="Audit"),
    log:
        "logs/audit.log",
    threads: 1
    resources:
        mem_mb=200,
        runtime=2,
    conda:
        "../environment.yml"
    shell:
        "python -m articlekit audit --baseline {input.baseline} --values {input.values} "
        "--bindings {input.bindings} --json {output.json} --md {output.md} --html {output.html} 2> {log}"


rule diff:
    input:
        values="build/values.json",
        bindings="build/bindings.json",
        release=latest_release,
    output:
        json="build/diff.json",
        md="build/diff.md",
    log:
        "logs/diff.log",
    threads: 1
    resources:
        mem_mb=200,
        runtime=2,
    conda:
        "../environment.yml"
    shell:
        "python -m articlekit diff --values {input.values} --bindings {input.bindings} "
        "--json {output.json} --md {output.md} {input.release} 2> {log}"


# No output on purpose: a release is asked for, never rebuilt because an
# input changed, and its snapshot is committed to the repo.
rule release:
    input:
        values="build/values.json",
        bindings="build/bindings.json",
        audit="build/audit.json",
    params:
        label=RELEASE_LABEL,
        releases=RELEASES,
    log:
        "logs/release.log",
    threads: 1
    resources:
        mem_mb=200,
        runtime=2,
    conda:
        "../environment.yml"
    shell:
        "python -m articlekit release --label {params.label} --values {input.values} "
        "--bindings {input.bindings} --audit {input.audit} --releases {params.releases} 2> {log}"
