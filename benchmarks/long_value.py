"""How long each format takes to print one long value, up to bind's limit.

    python benchmarks/long_value.py [--lengths 100 2500 5000 10000] [--formats pdf docx html]

For each length: the test fixture's article (tests/fixtures/article) in a
scratch folder, with one experiment string of that many characters printed
in prose and in a fenced code block, bound, then each format rendered on
the Pandoc route. Prints seconds per format and the ratio to the shortest
length, so growth faster than linear shows as a ratio above the length's.
The longest is articlekit.article.bind.MAX_VALUE_TEXT: a longer value is
refused before any format runs (Pandoc's Typst writer took 12 s for 25,000
characters and 117 s for 100,000 before the limit).
"""

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from articlekit.article.bind import MAX_VALUE_TEXT, bind  # noqa: E402
from articlekit.core.jsonio import read_json, write_json  # noqa: E402
from articlekit.data.values import merge  # noqa: E402
from articlekit.render import formats  # noqa: E402
from articlekit.render import page  # noqa: E402
from tests.fixture_bibliography import copy_article_files  # noqa: E402

ARTICLE = """---
title: "One long value"
---

## Text

The message: {{< value demo.error_message >}}.

```text
{{< value demo.error_message >}}
```

Source: {{< source demo.error_message >}}.

## Where every number comes from

{{< provenance >}}
"""


WORDS = "attention weights overflow "  # --one-word: a single run of x, no space to break at


def project(folder, length):
    shutil.copytree(ROOT / "tests" / "fixtures" / "article", folder)
    copy_article_files(folder)  # the article's settings as the folder's own, and the files they name
    (folder / "index.qmd").write_text(ARTICLE, encoding="utf-8")
    result = folder / "results" / "demo.json"
    data = read_json(result)
    words = (WORDS * (length // len(WORDS) + 1))[:length]
    data["values"]["error_message"] = words
    write_json(result, data)
    values = merge((p, read_json(p)) for p in sorted((folder / "results").glob("*.json")))
    bindings = folder / "build" / "bindings.json"
    article = folder / "index.qmd"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, strict=False))
    return article, bindings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 2500, 5000, MAX_VALUE_TEXT])
    parser.add_argument("--formats", nargs="+", default=["pdf", "docx", "html"])
    parser.add_argument(
        "--past-the-limit", action="store_true", help="lift bind's limit for this run: what a longer value would cost"
    )
    parser.add_argument("--one-word", action="store_true", help="the value one run of x, with no space")
    args = parser.parse_args()
    if args.one_word:
        global WORDS
        WORDS = "x"
    if args.past_the_limit:
        from articlekit.article import bind as bind_module

        bind_module.MAX_VALUE_TEXT = max(args.lengths)
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for length in args.lengths:
            article, bindings = project(Path(tmp) / f"n{length}" / "article", length)
            for name in args.formats:
                out = article.parent / "build" / Path(formats.get(name).output).name
                start = time.perf_counter()
                page.render_format(name, article, bindings, out, "pandoc")
                times[length, name] = time.perf_counter() - start
    shortest = args.lengths[0]
    print(f"{'characters':>10} " + " ".join(f"{name:>16}" for name in args.formats))
    for length in args.lengths:
        cells = [f"{times[length, n]:6.2f} s ({times[length, n] / times[shortest, n]:4.1f}x)" for n in args.formats]
        print(f"{length:>10,} " + " ".join(f"{c:>16}" for c in cells))


if __name__ == "__main__":
    main()
