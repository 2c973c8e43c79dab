"""The page a renderer hands back is checked, not trusted.

A renderer's exit code says little about its page. Quarto in a folder whose
path has a component starting with "." ignores _quarto.yml and exits 0 with
a page that loads its scripts from a missing index_files/libs/, MathJax from
a CDN and the style sheets by absolute path, without its table of contents.
So before a page becomes build/article.html it must be:

- self-contained: everything it loads is embedded (a data: URL). No script,
  style sheet, font, image or frame from a local file or from the network,
  in an attribute (script src, link href, img src/srcset, ...), a style
  attribute or <style> element (url(), @import), an embedded style sheet
  or SVG image. Plain hyperlinks (<a href>) are fine: they load nothing.
- made with the article's format options, as _quarto.yml's html format
  states them: a table of contents when it asks for one (and the page has
  a heading to list), and math as
  MathML (the one method that needs no script, so reads offline), not TeX
  left for MathJax or KaTeX to typeset.

check_page raises PageError with the first offender, the page and the fix.
"""

import base64
import re
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

from articlekit.render.renderers import RenderError


class PageError(RenderError):
    pass


# Attributes that make the browser fetch what they name, by tag ("*": any).
LOADING = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "iframe": ("src",),
    "frame": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "input": ("src",),
    "image": ("href", "xlink:href"),  # SVG
    "use": ("href", "xlink:href"),  # SVG; "#id" points inside the page
    "feimage": ("href", "xlink:href"),
}
# <link rel=...> kinds that name a page rather than load one.
NOT_LOADED_LINKS = {"canonical", "alternate", "author", "license", "help", "next", "prev", "search", "bookmark"}

# CSS is scanned, not parsed: only its url(...) and @import "..." matter,
# once comments are gone (no CSS parser is among the installed packages).
CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)""", re.I)
CSS_IMPORT = re.compile(r"""@import\s+(?:"([^"]*)"|'([^']*)')""", re.I)

LOCAL_FIX = ("embed it: keep `embed-resources: true` under format: html: in {options} (Quarto ignores that file "
             "in a folder whose path has a component starting with \".\"; `python -m articlekit render` hands "
             "it the options itself), and show figures with markdown image syntax, which both renderers embed")
NETWORK_FIX = ("the page must read offline: for math keep `html-math-method: mathml` under format: html: in "
               "{options}; otherwise embed the file, or make it a plain link (<a href>)")


def kind_of(url):
    """'network', 'local' (a file the page does not hold) or None (fine:
    embedded, a fragment, or a scheme that fetches no file)."""
    url = url.strip()
    if not url or url.startswith("#"):
        return None
    if url.startswith("//"):
        return "network"
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme in ("http", "https"):
        return "network"
    if scheme in ("", "file") or len(scheme) == 1:  # a relative or absolute path (C: on Windows)
        return "local"
    return None  # data:, blob:, about:, mailto:, javascript:


def srcset_urls(srcset):
    """The URLs of a srcset ("a.png 1x, b.png 2x"), as the HTML standard
    splits it: a URL runs to the next space (a data: URL holds commas), its
    descriptors to the next comma."""
    urls, at = [], 0
    while at < len(srcset):
        while at < len(srcset) and (srcset[at].isspace() or srcset[at] == ","):
            at += 1
        start = at
        while at < len(srcset) and not srcset[at].isspace():
            at += 1
        url = srcset[start:at]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            depth = 0
            while at < len(srcset) and (srcset[at] != "," or depth):
                depth += {"(": 1, ")": -1}.get(srcset[at], 0)
                at += 1
        if url:
            urls.append(url)
    return urls


def css_urls(css):
    css = CSS_COMMENT.sub("", css)
    for pattern, form in ((CSS_URL, "url({})"), (CSS_IMPORT, "@import {}")):
        for found in pattern.finditer(css):
            url = next(group for group in found.groups() if group is not None)
            yield form.format(url), url


def data_url_text(url):
    """The text of a data: URL whose type is CSS or SVG, else None."""
    head, _, payload = url.partition(",")
    media = head[5:].split(";")
    if media[0].lower() not in ("text/css", "image/svg+xml"):
        return None
    try:
        raw = base64.b64decode(payload) if "base64" in media[1:] else urllib.parse.unquote_to_bytes(payload)
        return media[0].lower(), raw.decode("utf-8", errors="replace")
    except ValueError:
        return None


class Page(HTMLParser):
    """What a page loads, and the marks of the options it was made with."""

    def __init__(self, where=""):
        super().__init__(convert_charrefs=True)
        self.where = where  # "" for the page, "inside <img src=...>" for an embedded SVG
        self.offenders = []  # (kind, what, line)
        self.has_toc = False
        self.section_levels = []  # of headings a table of contents would list (those with an anchor)
        self.tex_math = []  # (what, line): math left as TeX for a script
        self._in_style = False

    def offend(self, kind, what):
        line = self.getpos()[0]
        self.offenders.append((kind, f"{what}{' ' + self.where if self.where else ''}", line))

    def handle_starttag(self, tag, attrs):
        attrs = [(name, value or "") for name, value in attrs]
        values = dict(attrs)
        if values.get("id") == "TOC":
            self.has_toc = True
        if re.fullmatch(r"h[1-6]", tag) and (values.get("id") or values.get("data-anchor-id")):
            self.section_levels.append(int(tag[1]))
        classes = values.get("class", "").split()
        if "math" in classes and tag in ("span", "div"):
            self.tex_math.append((f'<{tag} class="{values["class"]}">', self.getpos()[0]))
        if tag == "style":
            self._in_style = True
        if tag == "link" and NOT_LOADED_LINKS & set(values.get("rel", "").lower().split()):
            return
        for name, value in attrs:
            if name in LOADING.get(tag, ()):
                urls = srcset_urls(value) if name == "srcset" else [value]
                for url in urls:
                    self.check_url(url, f'<{tag} {name}="{short(url)}">')
            elif name == "style":
                self.check_css(value, f"<{tag} style=...>")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "style":
            self._in_style = False

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.check_css(data, "<style>")

    def check_url(self, url, what):
        kind = kind_of(url)
        if kind:
            self.offend(kind, what)
        elif url.strip().lower().startswith("data:"):
            self.check_embedded(url.strip(), what)

    def check_css(self, css, what):
        for form, url in css_urls(css):
            kind = kind_of(url)
            if kind:
                self.offend(kind, f"{form} in {what}")
            elif url.strip().lower().startswith("data:"):
                self.check_embedded(url.strip(), f"{short(form)} in {what}")

    def check_embedded(self, url, what):
        """An embedded style sheet or SVG image may itself load a file."""
        found = data_url_text(url)
        if not found:
            return
        media, text = found
        if media == "text/css":
            self.check_css(text, what)
            return
        inner = Page(f"inside {what}")
        inner.feed(text)
        inner.close()
        line = self.getpos()[0]
        self.offenders += [(kind, found_what, line) for kind, found_what, _ in inner.offenders]


def short(text, limit=90):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def math_method(options):
    method = options.get("html-math-method")
    if isinstance(method, dict):
        method = method.get("method")
    return str(method).lower() if method else None


def check_page(page, options, options_file, out=None):
    """Raise PageError unless the HTML file `page` is self-contained and
    shows the format options `options` (_quarto.yml's html format, read
    from options_file) asked for. `out` names the page in the message (the
    file it would have become); nothing is written here."""
    name = out or page
    parser = Page()
    parser.feed(Path(page).read_text(encoding="utf-8"))
    parser.close()
    if parser.offenders:
        kind, what, line = parser.offenders[0]
        more = len(parser.offenders) - 1
        fix = (LOCAL_FIX if kind == "local" else NETWORK_FIX).format(options=options_file)
        loads = "a local file it does not embed" if kind == "local" else "from the network"
        raise PageError(f"{name}: the page is not self-contained: {what} (line {line}) loads {loads}"
                        f"{f', and {more} more reference(s) do too' if more else ''}; {fix}")
    depth = options.get("toc-depth", 3)
    listed = [level for level in parser.section_levels if level <= depth]
    if options.get("toc") and listed and not parser.has_toc:
        raise PageError(f"{name}: the page has no table of contents, which {options_file} asks for (format: html: "
                        "toc: true): the renderer did not apply the article's format options. Quarto ignores "
                        "_quarto.yml in a folder whose path has a component starting with \".\"; render with "
                        "`python -m articlekit render`, which hands Quarto the options itself")
    if parser.tex_math:
        what, line = parser.tex_math[0]
        asked = math_method(options)
        fix = (f"the renderer did not apply html-math-method: mathml from {options_file}" if asked == "mathml"
               else f"{options_file} asks for {asked or 'the default method (MathJax)'}; set "
                    "`html-math-method: mathml` under format: html:, which needs no script")
        raise PageError(f"{name}: the page's math is TeX left for a script to typeset ({what}, line {line}), "
                        f"not MathML: {fix}")
