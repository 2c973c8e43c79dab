"""Which link targets an edition may carry: read as a browser reads them.

A browser does not follow the text of an href: the WHATWG URL parser first
strips leading and trailing C0 control characters and spaces and removes
every tab and line break inside, so `\\x01javascript:...` and
`java\\tscript:...` both run code when clicked. A check that strips only
whitespace, or matches a list of bad schemes, misses them. So a target is
judged by an allowlist after that same normalization:

- a fragment (#id): a place in the article itself;
- an http, https or mailto URL;
- a file of the build's folder, relative to the page (audit.html): no
  scheme, no leading slash, no backslash, no `..`.

Anything else, and any control character at all (no honest link needs
one), is refused. The prose check (articlekit.article.prose_guard) and the
page check (articlekit.render.pagecheck) both ask this module.
"""

import re

SAFE_SCHEMES = ("http", "https", "mailto")

# C0 controls and space: what the URL parser strips from both ends.
_C0_OR_SPACE = "".join(chr(c) for c in range(0x21))
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_CLIMBS = re.compile(r"(?:^|/)\.\.(?:/|$)")


def as_browser_reads(target):
    """The target as the URL parser sees it before it looks for a scheme."""
    return _TAB_OR_NEWLINE.sub("", target.strip(_C0_OR_SPACE))


def scheme_of(target):
    """The scheme a browser finds in target ("javascript"), lowercase, or None."""
    found = _SCHEME.match(as_browser_reads(target))
    return found.group(1).lower() if found else None


def link_problem(target):
    """Why an edition may not carry a link to `target`, or None when it may.
    The reason is a phrase: "the link {target} {reason}"."""
    if _CONTROL.search(target):
        return "holds a control character, which a browser drops before it reads the scheme"
    url = as_browser_reads(target)
    scheme = scheme_of(url)
    if scheme is not None:
        if scheme in SAFE_SCHEMES:
            return None
        return f"uses the scheme {scheme}:, which may run code or open a file when clicked"
    if url.startswith(("/", "\\")) or "\\" in url or _CLIMBS.search(url.split("#", 1)[0]):
        return "names a file outside the build's folder"
    return None
