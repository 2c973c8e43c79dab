"""What a piece of CSS makes a browser fetch: every url(), every URL string
of image-set() and its kin, every @import.

Read with a CSS tokenizer (tinycss2, which follows the CSS Syntax spec), not
with patterns: a comment inside a name (u/**/rl), an escape (\\75 rl(...) is
url(...)), an at-rule spelt with an escape (@im\\port) or a URL given as a
bare string (image-set("a.png" 1x)) read as the browser reads them.

The page check (articlekit.render.pagecheck) reads the page's CSS with it,
and the prose check (articlekit.article.prose_guard) an author's style=
attributes and the style sheets a page embeds.
"""

import tinycss2

# Functions whose string arguments are URLs themselves (not only a url()
# inside them): url("a.png") is a function token once the URL is quoted.
URL_STRING_FUNCTIONS = {
    "url",
    "src",
    "image-set",
    "-webkit-image-set",
    "image",
    "-webkit-image",
    "cross-fade",
    "-webkit-cross-fade",
}


# Every way CSS names a URL spells one of these (an escape needs a backslash;
# a comment cannot join a name, so u/**/rl names nothing): text without
# them names no URL, and is not tokenized (a page has thousands of style=).
_MAY_NAME_A_URL = ("url", "src", "image", "fade", "import", "\\")


def fetched(css):
    """-> [(form, url)] for each URL the CSS text names, in order: form says
    how it is named ("url(x)", "image-set(x)", "@import x")."""
    return [(form, url) for form, url, _ in fetched_at(css)]


def fetched_at(css):
    """fetched(), each with its line in the CSS text: [(form, url, line)]."""
    if not any(mark in css.lower() for mark in _MAY_NAME_A_URL):
        return []
    found = []
    _walk(tinycss2.parse_component_value_list(css, skip_comments=True), found)
    return found


def _walk(values, found):
    previous = None
    for value in values:
        if value.type == "url":
            found.append((f"url({value.value})", value.value, value.source_line))
        elif value.type == "function":
            if value.lower_name in URL_STRING_FUNCTIONS:
                found += [
                    (f"{value.lower_name}({arg.value})", arg.value, arg.source_line)
                    for arg in value.arguments
                    if arg.type == "string"
                ]
            _walk(value.arguments, found)
        elif value.type in ("() block", "[] block", "{} block"):
            _walk(value.content, found)
        elif (
            value.type == "string"
            and previous is not None
            and previous.type == "at-keyword"
            and previous.lower_value == "import"
        ):
            found.append((f"@import {value.value}", value.value, value.source_line))
        if value.type not in ("whitespace", "comment"):
            previous = value


def loads_nothing(url):
    """A URL in CSS that fetches nothing: embedded (data:), a fragment of the
    page (url(#gradient) in SVG), or empty."""
    url = url.strip()
    return not url or url.startswith("#") or url[:5].lower() == "data:"
