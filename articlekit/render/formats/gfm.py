"""The markdown: build/article.md, GitHub's, the text that diffs between builds read.

Numbers without their links (a moved anchor would show as a change), math
as Quarto's gfm writes it ($...$), the title as a heading on top: the same
bytes from Quarto and from Pandoc. Its provenance table must be a table.
"""

import re

from articlekit.render.checks import check_markdown_structure
from articlekit.render.formats import Format
from articlekit.render.pandoc_route import pandoc_markdown
from articlekit.render.quarto_route import quarto_render


def write(job):
    if job.renderer == "quarto":
        name = quarto_render(job)
        # Quarto's gfm template leaves two blank lines under the title; the
        # Pandoc route one. article.md is diffed between builds: one form.
        text = job.produced.read_text(encoding="utf-8")
        job.produced.write_text(re.sub(r"\A(# [^\n]*\n)\n+", r"\1\n", text), encoding="utf-8")
        return name
    return pandoc_markdown(job)


def check(job):
    check_markdown_structure(job.source, job.produced)


FORMAT = Format(
    name="gfm",
    output="build/article.md",
    describe="GitHub markdown, for diffs between builds",
    # Math as Quarto's gfm writes it ($...$, $$...$$), not Pandoc's default
    # (```math blocks): article.md comes out the same from both renderers.
    writer="gfm-tex_math_gfm+tex_math_dollars",
    write=write,
    check=check,
    quarto=True,
    quarto_writer="gfm",
)
