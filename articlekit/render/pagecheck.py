"""The page a renderer hands back is checked, not trusted.

A renderer's exit code says little about its page. Quarto in a folder whose
path has a component starting with "." ignores _quarto.yml and exits 0 with
a page that loads its scripts from a missing index_files/libs/, MathJax from
a CDN and the style sheets by absolute path, without its table of contents;
and whatever reached the page from the prose runs in every reader's
browser. So before a page becomes build/article.html it must:

- load nothing: everything it shows is embedded (a data: URL). No script,
  style sheet, font, image, frame or plugin from a local file or from the
  network, named anywhere a browser fetches from: an element's src,
  srcset, poster, background, data or href (<link> of any rel, SVG's
  href and xlink:href outside a fragment), CSS's url(), image-set() and
  @import (in <style>, in style= and in any attribute holding a url()),
  and inside an embedded style sheet or SVG image. No <iframe>, <frame>,
  <object>, <embed> or <applet> at all.
- navigate nowhere by itself: no <base>, no <meta http-equiv="refresh">,
  no form that submits (action=, formaction=), no ping=. Plain hyperlinks
  (<a href>) are fine: they load nothing until a reader follows one.
- run only the renderer's own code: no event handler attribute (on*), no
  javascript: link, no SVG animation that rewrites a link, and no script
  but those whose bodies the renderer itself puts on any page it makes
  with these options (own_scripts: their SHA-256 digests; Pandoc's page
  has none, Quarto's are read from a page it renders with the article's
  options and an empty body: articlekit.render.quarto_route).
- be made with the article's format options, as _quarto.yml's html format
  states them: a table of contents when it asks for one (and the page has
  a heading to list), and math as MathML (the one method that needs no
  script, so reads offline), not TeX left for MathJax or KaTeX to typeset.

The page is parsed as a browser parses it (html5lib, which implements the
WHATWG HTML parsing algorithm): the standard library's html.parser reads
"<!--><img src=x>" as one comment and "<svg><style><img src=x>" as a style
sheet, where a browser sees, and loads, an image. CSS is read with a CSS
tokenizer (articlekit.core.css).

check_page raises PageError with the first offender, its line, the page
and the fix.

The check is one lock; the page carries a second of its own, for the
reader's browser: a Content-Security-Policy (PAGE_POLICY, the first
element of its <head>, written by add_policy) that lets it load nothing
but what it embeds, whatever a check might miss (a URL assembled in CSS
from custom properties, say). check_page refuses a page without it. A
<meta> policy does not govern navigation (a meta refresh) and, in
Chromium, an SVG <use> of another file: those the check itself refuses
(tests/test_browser.py plants both).
"""

import base64
import hashlib
import re
import urllib.parse
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import html5lib
from html5lib.treebuilders import getTreeBuilder

from articlekit.core.css import fetched, loads_nothing
from articlekit.core.urls import scheme_of
from articlekit.render.renderers import RenderError


class PageError(RenderError):
    pass


# What the page may load: only what it embeds (data: URLs: Quarto embeds its
# scripts, fonts and styles so) and its own inline scripts and styles (the
# renderer's, checked by digest below); nothing from a file or the network,
# no <base>, no form. A <meta> policy cannot say
# frame-ancestors; the preview's server sends its own policy as a header.
PAGE_POLICY = (
    "default-src 'none'; img-src data:; media-src data:; font-src data:; "
    "style-src 'unsafe-inline' data:; script-src 'unsafe-inline' data:; base-uri 'none'; form-action 'none'"
)
POLICY_META = f'<meta http-equiv="Content-Security-Policy" content="{PAGE_POLICY}">'


def with_policy(text, where="the page"):
    """The HTML text with POLICY_META as the first element of its <head>
    (before anything a policy must cover), on the same line as the tag, so
    every line keeps its number."""
    head = re.search(r"<head(?:\s[^>]*)?>", text, re.I)
    if head is None:
        raise PageError(f"{where}: the page has no <head> to carry its Content-Security-Policy")
    return text[: head.end()] + POLICY_META + text[head.end() :]


def add_policy(page):
    """with_policy, in place, for the HTML file `page`."""
    text = Path(page).read_text(encoding="utf-8")
    Path(page).write_text(with_policy(text, page), encoding="utf-8")


SVG = "http://www.w3.org/2000/svg"
MATHML = "http://www.w3.org/1998/Math/MathML"

# Elements that embed another page or a plugin: refused whatever they load.
FRAMES = {"iframe", "frame", "frameset", "object", "embed", "applet", "portal", "fencedframe"}
# Attributes a browser fetches from, on any element (href: see NAVIGATING).
LOADING = {
    "src",
    "srcset",
    "imagesrcset",
    "poster",
    "background",
    "data",
    "lowsrc",
    "dynsrc",
    "manifest",
    "codebase",
    "archive",
    "classid",
    "href",
    "srcdoc",
}
# Elements whose href is a hyperlink (followed by a reader), not a load.
NAVIGATING = {(None, "a"), (None, "area"), (SVG, "a")}
# <meta http-equiv> values that neither load nor navigate.
INERT_HTTP_EQUIV = {"content-type", "x-ua-compatible", "content-security-policy", "default-style"}
# Schemes that run code; read as a browser reads a URL (articlekit.core.urls:
# control characters and whitespace dropped first).
RUNNING_SCHEMES = ("javascript", "vbscript")
# SVG animations, which can set an attribute (a link's target) over time.
ANIMATIONS = {"animate", "set", "animatemotion", "animatetransform"}

LOCAL_FIX = (
    "embed it: keep `embed-resources: true` under format: html: in {options} (Quarto ignores that file "
    "in a folder whose path has a component starting with \".\"; `python -m articlekit render` hands "
    "it the options itself), and show figures with markdown image syntax, which articlekit embeds"
)
NETWORK_FIX = (
    "the page must read offline: for math keep `html-math-method: mathml` under format: html: in "
    "{options}; otherwise embed the file, or make it a plain link (<a href>)"
)
RUNS_FIX = (
    "the page may run only the renderer's own scripts: remove the script or handler (raw HTML in the "
    "prose is refused when the article is read: `python -m articlekit parse` names its line)"
)
NAVIGATES_FIX = "remove it: the page goes nowhere by itself; a reader follows a plain link (<a href>) or not"
FRAME_FIX = (
    "remove it: the page embeds no other page or plugin; link to it (<a href>), or show a figure "
    "an experiment's rule writes"
)
SAYS = {
    "local": ("is not self-contained", "loads a local file it does not embed", LOCAL_FIX),
    "network": ("is not self-contained", "loads from the network", NETWORK_FIX),
    "frame": ("is not self-contained", "embeds another page or a plugin", FRAME_FIX),
    "runs": ("runs code the build did not put there", "runs in the reader's browser", RUNS_FIX),
    "navigates": ("navigates on its own", "sends the reader's browser elsewhere", NAVIGATES_FIX),
}


def kind_of(url):
    """'network', 'local' (a file the page does not hold) or None (fine:
    embedded, a fragment, or a scheme that fetches no file)."""
    url = url.strip()
    if not url or url.startswith("#"):
        return None
    if url.startswith("//"):
        return "network"
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme in ("http", "https", "ws", "wss", "ftp"):
        return "network"
    if scheme in ("", "file") or len(scheme) == 1:  # a relative or absolute path (C: on Windows)
        return "local"
    return None  # data:, blob:, about:, mailto:


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


def data_url_bytes(url):
    """(media type, bytes) of a data: URL, or None when it is not one."""
    if not url.strip().lower().startswith("data:"):
        return None
    head, _, payload = url.strip()[5:].partition(",")
    media = head.split(";")
    try:
        raw = (
            base64.b64decode(payload)
            if "base64" in [m.strip().lower() for m in media[1:]]
            else urllib.parse.unquote_to_bytes(payload)
        )
    except ValueError:
        return None
    return media[0].strip().lower(), raw


def short(text, limit=90):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


_TREE = getTreeBuilder("etree")


def parse_html(text):
    """-> (the document as html5lib's ElementTree, {element: line})."""
    lines, parser = {}, None

    class Element(_TREE.elementClass):
        def __init__(self, name, namespace=None):
            super().__init__(name, namespace)
            if parser is not None and getattr(parser, "tokenizer", None) is not None:
                lines[self._element] = parser.tokenizer.stream.position()[0]

    class Builder(_TREE):
        elementClass = Element

    parser = html5lib.HTMLParser(tree=Builder, namespaceHTMLElements=False)
    return parser.parse(text), lines


def _is_policy(element):
    return element.tag == "meta" and element.get("http-equiv", "").strip().lower() == "content-security-policy"


def split_name(name):
    """'{ns}local' -> (ns, local); 'local' -> (None, local)."""
    if name.startswith("{"):
        namespace, _, local = name[1:].partition("}")
        return namespace, local
    return None, name


def script_body(element):
    """A script's code: its data: URL's bytes, else its text (None when it
    names a file to fetch instead)."""
    src = next((v for k, v in element.attrib.items() if split_name(k)[1] in ("src", "href")), None)
    if src is not None and src.strip():
        found = data_url_bytes(src)
        return found[1] if found else None
    return (element.text or "").encode("utf-8")


def digest(body):
    return hashlib.sha256(body).hexdigest()


def script_digests(page):
    """The SHA-256 digests of every script body on the page (a file)."""
    document, _ = parse_html(Path(page).read_text(encoding="utf-8"))
    bodies = (
        script_body(el) for el in document.iter() if isinstance(el.tag, str) and split_name(el.tag)[1] == "script"
    )
    return frozenset(digest(body) for body in bodies if body is not None)


class Page:
    """What a page loads, runs and navigates to, and the marks of the
    options it was made with."""

    def __init__(self, own_scripts=frozenset(), where=""):
        self.own_scripts = own_scripts
        self.where = where  # "" for the page, "inside <img src=...>" for an embedded SVG
        self.offenders = []  # (kind, what, line)
        self.has_toc = False
        self.section_levels = []  # of headings a table of contents would list (those with an anchor)
        self.tex_math = []  # (what, line): math left as TeX for a script
        self.line = 0

    def read(self, text):
        document, lines = parse_html(text)
        head = document.find("head")
        first = next((child for child in head if isinstance(child.tag, str)), None) if head is not None else None
        self.policy = first.get("content") if first is not None and _is_policy(first) else None
        self.policies = sum(1 for element in document.iter("meta") if _is_policy(element))
        for element in document.iter():
            if isinstance(element.tag, str):
                self.line = lines.get(element, self.line)
                self.element(element)
        return self

    def read_svg(self, text):
        """An SVG image (a data: URL), read as a browser reads image/svg+xml:
        as XML. One that is not well-formed shows nothing, so loads nothing."""
        try:
            document = ElementTree.fromstring(text.encode("utf-8"))
        except ElementTree.ParseError:
            return self
        for element in document.iter():
            if isinstance(element.tag, str):
                self.element(element)
        return self

    def offend(self, kind, what):
        self.offenders.append((kind, f"{what}{' ' + self.where if self.where else ''}", self.line))

    def element(self, element):
        namespace, tag = split_name(element.tag)
        tag = tag.lower() if namespace is None else tag
        attrs = [(split_name(name)[1], value) for name, value in element.attrib.items()]
        values = {name.lower(): value for name, value in attrs}
        self.marks(namespace, tag, values)
        for name, value in attrs:
            if name.lower().startswith("on"):
                self.offend("runs", f'<{tag} {name}="{short(value, 40)}">')
        if namespace is None and tag in FRAMES:
            self.offend("frame", f"<{tag}{self.first_url(values)}>")
            return
        if namespace is None and tag == "base":
            self.offend("navigates", f'<base href="{short(values.get("href", ""))}">')
        if (
            namespace is None
            and tag == "meta"
            and "http-equiv" in values
            and values["http-equiv"].strip().lower() not in INERT_HTTP_EQUIV
        ):
            self.offend(
                "navigates",
                f'<meta http-equiv="{values["http-equiv"]}" content="{short(values.get("content", ""), 40)}">',
            )
        for name in ("action", "formaction", "ping"):
            if name in values:
                self.offend("navigates", f'<{tag} {name}="{short(values[name])}">')
        if (
            tag.lower() in ANIMATIONS
            and namespace == SVG
            and split_name(values.get("attributename", ""))[1].split(":")[-1].lower() == "href"
        ):
            self.offend("runs", f'<{tag} attributeName="{values["attributename"]}">')
        if tag == "script":
            self.script(element, values)
            return
        if tag == "style":
            self.check_css(element.text or "", "<style>")
        for name, value in attrs:
            self.attribute(namespace, tag, name, value)

    def marks(self, namespace, tag, values):
        """The options' marks: the table of contents, the headings it lists,
        math left as TeX."""
        if namespace is not None:
            return
        if values.get("id") == "TOC":
            self.has_toc = True
        if re.fullmatch(r"h[1-6]", tag) and (values.get("id") or values.get("data-anchor-id")):
            self.section_levels.append(int(tag[1]))
        if "math" in values.get("class", "").split() and tag in ("span", "div"):
            self.tex_math.append((f'<{tag} class="{values["class"]}">', self.line))

    @staticmethod
    def first_url(values):
        for name in ("src", "data", "srcdoc", "href"):
            if name in values:
                return f' {name}="{short(values[name], 60)}"'
        return ""

    def script(self, element, values):
        src = values.get("src") or values.get("href")
        if src is not None and src.strip() and not src.strip().lower().startswith("data:"):
            kind = kind_of(src) or "runs"
            self.offend(kind, f'<script src="{short(src)}">')
            return
        body = script_body(element)
        if body is None or digest(body) not in self.own_scripts:
            shown = f'src="{short(src, 50)}"' if src else f"holding {short((element.text or '').strip(), 50)!r}"
            self.offend("runs", f"<script {shown}> (not one of the renderer's own scripts)")

    def attribute(self, namespace, tag, name, value):
        lowered = name.lower()
        if lowered == "style":
            self.check_css(value, f"<{tag} style=...>")
        elif lowered == "href" and (namespace, tag) in NAVIGATING or (lowered == "href" and namespace == MATHML):
            if scheme_of(value) in RUNNING_SCHEMES:
                self.offend("runs", f'<{tag} href="{short(value, 50)}">')
        elif lowered in LOADING:
            if lowered == "srcdoc":
                self.offend("frame", f'<{tag} srcdoc="{short(value, 40)}">')
                return
            urls = srcset_urls(value) if lowered in ("srcset", "imagesrcset") else [value]
            for url in urls:
                self.check_url(url, f'<{tag} {name}="{short(url)}">')
        elif "url(" in value.lower() or "image-set(" in value.lower():
            self.check_css(value, f"<{tag} {name}=...>")  # an SVG paint (fill="url(...)") or the like

    def check_url(self, url, what):
        if scheme_of(url) in RUNNING_SCHEMES:
            self.offend("runs", what)
            return
        kind = kind_of(url)
        if kind:
            self.offend(kind, what)
        elif url.strip().lower().startswith("data:"):
            self.check_embedded(url.strip(), what)

    def check_css(self, css, what):
        for form, url in fetched(css):
            if loads_nothing(url):
                if url.strip().lower().startswith("data:"):
                    self.check_embedded(url.strip(), f"{short(form)} in {what}")
                continue
            self.offend(kind_of(url) or "network", f"{short(form)} in {what}")

    def check_embedded(self, url, what):
        """An embedded style sheet or SVG image may itself load a file."""
        found = data_url_bytes(url)
        if not found or found[0] not in ("text/css", "image/svg+xml"):
            return
        media, raw = found
        text = raw.decode("utf-8", errors="replace")
        if media == "text/css":
            self.check_css(text, what)
            return
        inner = Page(self.own_scripts, f"inside {what}")
        inner.line = self.line
        inner.read_svg(text)
        self.offenders += [(kind, found_what, self.line) for kind, found_what, _ in inner.offenders]


def math_method(options):
    method = options.get("html-math-method")
    if isinstance(method, dict):
        method = method.get("method")
    return str(method).lower() if method else None


def check_page(page, options, options_file, out=None, own_scripts=frozenset()):
    """Raise PageError unless the HTML file `page` loads nothing, navigates
    nowhere, runs only the scripts whose digests own_scripts holds, and
    shows the format options `options` (_quarto.yml's html format, read
    from options_file) asked for. `out` names the page in the message (the
    file it would have become); nothing is written here."""
    name = out or page
    parser = Page(own_scripts).read(Path(page).read_text(encoding="utf-8"))
    if parser.offenders:
        kind, what, line = parser.offenders[0]
        more = len(parser.offenders) - 1
        problem, does, fix = SAYS[kind]
        raise PageError(
            f"{name}: the page {problem}: {what} (line {line}) {does}"
            f"{f', and {more} more reference(s) do too' if more else ''}; "
            f"{fix.format(options=options_file)}"
        )
    if parser.policy != PAGE_POLICY or parser.policies != 1:
        raise PageError(
            f"{name}: the page does not carry its Content-Security-Policy as the first element of its "
            f"<head> ({parser.policies} policies found): it is written by articlekit.render.pagecheck."
            "add_policy; render the page with `python -m articlekit render`"
        )
    depth = options.get("toc-depth", 3)
    listed = [level for level in parser.section_levels if level <= depth]
    if options.get("toc") and listed and not parser.has_toc:
        raise PageError(
            f"{name}: the page has no table of contents, which {options_file} asks for (format: html: "
            "toc: true): the renderer did not apply the article's format options. Quarto ignores "
            "_quarto.yml in a folder whose path has a component starting with \".\"; render with "
            "`python -m articlekit render`, which hands Quarto the options itself"
        )
    if parser.tex_math:
        what, line = parser.tex_math[0]
        asked = math_method(options)
        fix = (
            f"the renderer did not apply html-math-method: mathml from {options_file}"
            if asked == "mathml"
            else f"{options_file} asks for {asked or 'the default method (MathJax)'}; set "
            "`html-math-method: mathml` under format: html:, which needs no script"
        )
        raise PageError(
            f"{name}: the page's math is TeX left for a script to typeset ({what}, line {line}), not MathML: {fix}"
        )
