# One rule per experiment: experiments/<name>.py -> results/<name>.json
# (+ figures/<name>-*.svg). Resources are measured (see README, Resources).


rule environment:
    input:
        script="experiments/environment.py",
        shared=SHARED_CODE,
    output:
        json="results/environment.json",
    log:
        "logs/environment.log",
    benchmark:
        "benchmarks/out/environment.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=600,
        runtime=5,
    params:
        config={},
        numpy=NUMPY_VERSION,
        torch=TORCH_VERSION,
    script:
        "../experiments/environment.py"


rule scaling:
    input:
        script="experiments/scaling.py",
        attention=ATTENTION_CODE,
        shared=SHARED_CODE,
    output:
        json="results/scaling.json",
        sweep=report(
            "figures/scaling-sweep.svg",
            caption="../report/scaling-sweep.rst",
            category="Figures",
        ),
    log:
        "logs/scaling.log",
    benchmark:
        "benchmarks/out/scaling.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        config=config["scaling"],
        numpy=NUMPY_VERSION,
    script:
        "../experiments/scaling.py"


rule example:
    input:
        script="experiments/example.py",
        attention=ATTENTION_CODE,
        shared=SHARED_CODE,
    output:
        json="results/example.json",
        heatmaps=report(
            "figures/example-heatmaps.svg",
            caption="../report/example-heatmaps.rst",
            category="Figures",
        ),
    log:
        "logs/example.log",
    benchmark:
        "benchmarks/out/example.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        config=config["example"],
        numpy=NUMPY_VERSION,
    script:
        "../experiments/example.py"


rule multihead:
    input:
        script="experiments/multihead.py",
        attention=ATTENTION_CODE,
        shared=SHARED_CODE,
    output:
        json="results/multihead.json",
        heads=report(
            "figures/multihead-heads.svg",
            caption="../report/multihead-heads.rst",
            category="Figures",
        ),
    log:
        "logs/multihead.log",
    benchmark:
        "benchmarks/out/multihead.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        config=config["multihead"],
        numpy=NUMPY_VERSION,
    script:
        "../experiments/multihead.py"


rule parity:
    input:
        script="experiments/parity.py",
        attention=ATTENTION_CODE,
        shared=SHARED_CODE,
    output:
        json="results/parity.json",
    log:
        "logs/parity.log",
    benchmark:
        "benchmarks/out/parity.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=700,
        runtime=5,
    params:
        config=config["parity"],
        numpy=NUMPY_VERSION,
        torch=TORCH_VERSION,
    script:
        "../experiments/parity.py"


rule mask_convention:
    input:
        script="experiments/mask_convention.py",
        attention=ATTENTION_CODE,
        shared=SHARED_CODE,
    output:
        json="results/mask_convention.json",
    log:
        "logs/mask_convention.log",
    benchmark:
        "benchmarks/out/mask_convention.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=800,
        runtime=5,
    params:
        config=config["mask_convention"],
        numpy=NUMPY_VERSION,
        torch=TORCH_VERSION,
    script:
        "../experiments/mask_convention.py"


# Takes every core so that nothing else in the DAG runs beside it. The script
# holds BLAS, OpenMP and PyTorch to one thread in-process (threadpoolctl) for
# the headline and the sweep, and to at most the CPUs it may use for the
# all-cores figure, whatever OMP/OPENBLAS_NUM_THREADS Snakemake exports.
rule timing:
    input:
        script="experiments/timing.py",
        attention=ATTENTION_CODE,
        shared=SHARED_CODE,
    output:
        json="results/timing.json",
        sweep=report(
            "figures/timing-sweep.svg",
            caption="../report/timing-sweep.rst",
            category="Figures",
        ),
    log:
        "logs/timing.log",
    benchmark:
        "benchmarks/out/timing.tsv"
    conda:
        "../environment.yml"
    threads: every_core
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        config=config["timing"],
        threads=job_threads,
        numpy=NUMPY_VERSION,
        torch=TORCH_VERSION,
    script:
        "../experiments/timing.py"


rule errors:
    input:
        script="experiments/errors.py",
        attention=ATTENTION_CODE,
        shared=SHARED_CODE,
    output:
        json="results/errors.json",
    log:
        "logs/errors.log",
    benchmark:
        "benchmarks/out/errors.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=700,
        runtime=5,
    params:
        config=config["errors"],
        numpy=NUMPY_VERSION,
        torch=TORCH_VERSION,
    script:
        "../experiments/errors.py"
