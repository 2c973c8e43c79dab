# From artifacts to the article: merge values, bind them into the prose,
# lint for typed numbers, render.

EXTENSION = [
    "article/_extensions/value/_extension.yml",
    "article/_extensions/value/value.lua",
]
# The articlekit modules each step runs: editing one reruns the step.
BIND_CODE = [
    "articlekit/bind.py",
    "articlekit/claims.py",
    "articlekit/fmt.py",
    "articlekit/shortcodes.py",
    "articlekit/values.py",
]
RENDER_CODE = [
    "articlekit/render.py",
    "articlekit/shortcodes.py",
    "articlekit/quarto_shortcodes.lua",
    "articlekit/quarto_layout.lua",
]


rule listings:
    input:
        source=ATTENTION_CODE,
        code="articlekit/listings.py",
    output:
        json="results/listings.json",
    log:
        "logs/listings.log",
    benchmark:
        "benchmarks/out/listings.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    shell:
        "python -m articlekit listings {input.source} --out {output.json} 2> {log}"


rule values:
    input:
        results=RESULTS,
        code="articlekit/values.py",
    output:
        json="build/values.json",
    log:
        "logs/values.log",
    benchmark:
        "benchmarks/out/values.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    shell:
        "python -m articlekit values {input.results} --out {output.json} 2> {log}"


rule lint_article:
    input:
        article=ARTICLE,
        values="build/values.json",
        code=["articlekit/lint.py", "articlekit/shortcodes.py"],
    output:
        report="build/lint.txt",
    log:
        "logs/lint_article.log",
    benchmark:
        "benchmarks/out/lint_article.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    shell:
        "python -m articlekit lint {input.article} --values {input.values} --out {output.report} 2> {log}"


rule bind:
    input:
        article=ARTICLE,
        values="build/values.json",
        code=BIND_CODE,
    output:
        json="build/bindings.json",
    log:
        "logs/bind.log",
    benchmark:
        "benchmarks/out/bind.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=400,
        runtime=2,
    params:
        strict=config["strict"],
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
        figures=article_figures,
        code=RENDER_CODE,
    output:
        html="build/article.html",
        md="build/article.md",
    log:
        "logs/render.log",
    benchmark:
        "benchmarks/out/render.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        renderer=config["renderer"],
    shell:
        "python -m articlekit render {input.article} --bindings {input.bindings} "
        "--renderer {params.renderer} --html {output.html} --md {output.md} 2> {log}"
