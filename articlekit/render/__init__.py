"""From the bound text to pages: the article's HTML and markdown, its PDF,
and the live preview, with the renderers' Lua filters, the Quarto
extension, the Typst style and the page's CSS beside the code that uses them.

Owns: choosing a renderer and reading its version (renderers), the page
(page), checking the page it got (pagecheck), the PDF (pdf), the preview
(preview), its piecewise render (incremental) and its HTTP server
(preview_server), the value extension's copy in an article (extension),
and what a Quarto user's own `quarto render` and `quarto preview` run
before and after each render (quarto_hooks), with the bindings it hands
the page, made in-process after a prose edit or by Snakemake (quarto_bind),
and the build's prose check made on the pieces of the article a save
changed (prose_pieces).

May import: articlekit.core, articlekit.experiment, articlekit.data,
articlekit.article.
"""
