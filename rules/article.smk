# From artifacts to the article: merge values, bind them into the prose,
# lint for typed numbers, render.

ARTICLE = "article/index.qmd"
EXTENSION = [
    "article/_extensions/value/_extension.yml",
    "article/_extensions/value/value.lua",
]


rule listings:
    input:
        source=ATTENTION_CODE,
    output:
        json="results/listings.json",
    log:
        "logs/listings.log",
    threads: 1
    resources:
        mem_mb=200,
        runtime=2,
    conda:
        "../environment.yml"
    shell:
        "python -m articlekit listings {input.source} --out {output.json} 2> {log}"


rule values:
    input:
        results=RESULTS,
    output:
        json="build/values.json",
    log:
        "logs/values.log",
    threads: 1
    resources:
        mem_mb=200,
        runtime=2,
    conda:
        "../environment.yml"
    shell:
        "python -m articlekit values {input.results} --out {output.json} 2> {log}"


rule lint_article:
    input:
        article=ARTICLE,
        values="build/values.json",
    output:
        report="build/lint.txt",
    log:
        "logs/lint_article.log",
    threads: 1
    resources:
        mem_mb=200,
        runtime=2,
    conda:
        "../environment.yml"
    shell:
        "python -m articlekit lint {input.article} --values {input.values} --out {output.report} 2> {log}"


rule bind:
    input:
        article=ARTICLE,
        values="build/values.json",
    output:
        json="build/bindings.json",
    params:
        strict=config["strict"],
    log:
        "logs/bind.log",
    threads: 1
    resources:
        mem_mb=200,
        runtime=2,
    conda:
        "../environment.yml"
    shell:
        "python -m articlekit bind {input.article} --values {input.values} "
        "--strict {params.strict} --out {output.json} 2> {log}"


rule render:
    input:
        article=ARTICLE,
        extension=EXTENSION,
        quarto="article/_quarto.yml",
        style="article/style.css",
        bindings="build/bindings.json",
        lint="build/lint.txt",
        figures=FIGURES,
    output:
        html="build/article.html",
        md="build/article.md",
    params:
        renderer=config["renderer"],
    log:
        "logs/render.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../environment.yml"
    shell:
        "python -m articlekit render {input.article} --bindings {input.bindings} "
        "--renderer {params.renderer} --html {output.html} --md {output.md} 2> {log}"
