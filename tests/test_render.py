"""render: the real value.lua, run by Pandoc through a filter that calls it
the way Quarto does, turns the fixture article into HTML and markdown."""

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest

from articlekit import render as rendermod
from articlekit.bind import bind
from articlekit.fmt import format_value
from articlekit.jsonio import read_json, write_json
from articlekit.shortcodes import scan
from articlekit.values import lookup, merge

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "article"


def make_article(folder, text=None):
    """The fixture article, with the project's real extension, _quarto.yml
    and stylesheet beside it."""
    shutil.copytree(FIXTURE, folder)
    shutil.copytree(ROOT / "article" / "_extensions", folder / "_extensions")
    for name in ("_quarto.yml", "style.css"):
        shutil.copy(ROOT / "article" / name, folder / name)
    if text is not None:
        (folder / "index.qmd").write_text(text, encoding="utf-8")
    values = merge((p, read_json(p)) for p in sorted((folder / "results").glob("*.json")))
    return folder / "index.qmd", values


def bind_and_render(folder, text=None, strict=True):
    article, values = make_article(folder, text)
    bindings = folder / "build" / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, strict))
    html_out, md_out = folder / "build" / "article.html", folder / "build" / "article.md"
    rendermod.render(article, bindings, "pandoc", html_out, md_out)
    return values, html_out.read_text(encoding="utf-8"), md_out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    # a folder name Pandoc's markdown would mangle (-- is a dash, _x_ emphasis)
    folder = tmp_path_factory.mktemp("render--_x_") / "article"
    values, page, md = bind_and_render(folder)
    return values, page, md, (folder / "index.qmd").read_text(encoding="utf-8")


class BoundValues(HTMLParser):
    """Text of every <a class="bound-value">, in document order."""

    def __init__(self):
        super().__init__()
        self.texts, self._in = [], False

    def handle_starttag(self, tag, attrs):
        if tag == "a" and "bound-value" in (dict(attrs).get("class") or ""):
            self._in = True
            self.texts.append("")

    def handle_endtag(self, tag):
        self._in = self._in and tag != "a"

    def handle_data(self, data):
        if self._in:
            self.texts[-1] += data


def test_every_shortcode_is_resolved(rendered):
    _, page, md, source = rendered
    # only the escaped one and the one in a shortcodes="false" block survive
    assert page.count("{{&lt;") == 2 and "{{<" not in page
    assert md.count("{{") == 2


def test_each_bound_number_is_format_of_its_json_value(rendered):
    values, page, _, source = rendered
    expected = [format_value(lookup(values["values"], sc.args[0]), sc.kwargs.get("fmt", ""))
                for sc in scan(source) if sc.name == "value" and sc.context == "prose" and not sc.escaped]
    parser = BoundValues()
    parser.feed(page)
    assert [" ".join(t.split()) for t in parser.texts] == [" ".join(e.split()) for e in expected]
    assert "0.921946" in parser.texts and "92.19%" in parser.texts


def test_bound_numbers_link_to_their_provenance_row_with_a_tooltip(rendered):
    _, page, _, _ = rendered
    assert ('<a href="#v-demo-dk64-unscaled-max-weight" class="bound-value" '
            'title="demo.dk64.unscaled.max_weight = 0.9219460123456789 (experiments/demo.py)">0.921946</a>') in page
    assert '<span id="v-demo-dk64-unscaled-max-weight"><code>demo.dk64.unscaled.max_weight</code></span>' in page


def test_code_block_shortcodes_are_resolved_with_quotes_stripped(rendered):
    _, _, md, _ = rendered
    assert 'print(f"{dk}: 0.921946")' in md
    assert "for dk in [16 64 512]:" in md
    assert "def softmax(x, axis=-1):\n    \"\"\"Softmax.\"\"\"" in md  # a multi-line listing
    assert "Inline code: `5.4`." in md


def test_a_value_with_markup_characters_renders_as_text(rendered):
    _, page, md, _ = rendered
    assert "a -&gt; b &lt;c&gt; &amp; *d*" in page  # prose and provenance: escaped text
    assert "<c>" not in page and "&#8594;" not in page and "→" not in page
    assert "# a -> b <c> & *d*" in md  # inside code: verbatim


def test_the_provenance_table_is_present(rendered):
    _, page, md, _ = rendered
    assert "<th" in page and "Claims checked" in page
    assert re.search(r"\| `demo\.parity\.max_abs_diff` \| 2\.220446049250313e-16 \| [^|]* \| \\< 1e-12 ✓ \| "
                     r"`[^`]*results/demo\.json` \| `experiments/demo\.py` \|", md)


def test_the_colophon_names_the_renderer(rendered):
    _, page, md, _ = rendered
    version = rendermod.tool_version(rendermod.pandoc_path())
    assert f"Built by Pandoc {version}." in md


def test_the_html_is_self_contained_with_the_stylesheet(rendered):
    _, page, _, _ = rendered
    assert "a.bound-value" in page  # article/style.css embedded
    assert '<link rel="stylesheet"' not in page and "<title>" in page


def test_a_failed_claim_in_non_strict_mode_shows_a_visible_warning(tmp_path):
    text = 'Reversed: {{< value demo.parity.reversed_diff fmt=".2f" expect="< 1e-12" >}}.\n\n{{< provenance >}}\n'
    _, page, md = bind_and_render(tmp_path / "article", text, strict=False)
    assert re.search(r'>3\.67</a> <span class="claim-failed" title="[^"]*">⚠ claim failed: &lt; 1e-12</span>', page)
    assert "3.67 **⚠ claim failed: \\< 1e-12**" in md


def test_a_key_missing_from_the_bindings_fails_the_render_naming_it(tmp_path):
    article, values = make_article(tmp_path / "article")
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, True))
    article.write_text(article.read_text(encoding="utf-8") + "\nNew: {{< value demo.timing.loop_ms >}}\n")
    html_out = tmp_path / "out" / "article.html"
    with pytest.raises(rendermod.RenderError, match=r"no binding for key 'demo.timing.loop_ms'"):
        rendermod.render(article, bindings, "pandoc", html_out, tmp_path / "out" / "article.md")
    assert not html_out.exists()  # nothing half-written


def test_bind_fails_on_a_misspelt_key_with_file_line_and_suggestions(tmp_path):
    article, values = make_article(tmp_path / "article", "A\n\nB {{< value demo.arrrow >}}\n")
    write_json(tmp_path / "values.json", values)
    out = tmp_path / "bindings.json"
    done = subprocess.run(["python", "-m", "articlekit", "bind", str(article), "--values",
                           str(tmp_path / "values.json"), "--strict", "true", "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1 and not out.exists()
    assert f"{article}:3: unknown key 'demo.arrrow'; closest: demo.arrow" in done.stderr


def test_auto_picks_quarto_only_when_it_is_on_path(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert rendermod.choose_renderer("auto") == "pandoc"
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/quarto")
    assert rendermod.choose_renderer("auto") == "quarto"


# --- the filter calls handlers exactly as Quarto does --------------------------

RECORDER = r"""
local function show(x)
  if type(x) == "string" then return "string:" .. x end
  return pandoc.utils.type(x) .. ":" .. pandoc.utils.stringify(x)
end
return {
  ["record"] = function(...)
    local n = select("#", ...)
    local args, kwargs, meta, raw_args, context = ...
    local kw = {}
    for k, v in pairs(kwargs) do table.insert(kw, k .. "=" .. show(v)) end
    table.sort(kw)
    local out = "n=" .. n .. " context=" .. context .. " args=" .. show(args[1])
      .. " kwargs=" .. table.concat(kw, ",") .. " missing=" .. show(kwargs["nothing"])
      .. " raw=" .. table.concat(raw_args, ",") .. " meta=" .. show(meta["who.name"])
    if context == "text" then return out end
    if context == "block" then return pandoc.Para({ pandoc.Str("BLOCK " .. out) }) end
    return pandoc.Str(out)
  end,
}
"""


def run_filter(tmp_path, text):
    ext = tmp_path / "_extensions" / "record"
    ext.mkdir(parents=True)
    (ext / "record.lua").write_text(RECORDER)
    (ext / "_extension.yml").write_text("contributes:\n  shortcodes:\n    - record.lua\n")
    from articlekit.shortcodes import to_quarto_markdown

    meta = tmp_path / "meta.yaml"
    meta.write_text(json.dumps({"shortcodes": rendermod.shortcode_files(tmp_path), "who": {"name": "ann"}}))
    lua = resources.files("articlekit") / "quarto_shortcodes.lua"
    done = subprocess.run([rendermod.pandoc_path(), "-f", "markdown", "-t", "plain", "--wrap", "none",
                           "--metadata-file", str(meta), "--lua-filter", str(lua)],
                          input=to_quarto_markdown(text), capture_output=True, text=True, check=True)
    return done.stdout


def test_handlers_get_args_kwargs_meta_raw_args_context_as_in_quarto(tmp_path):
    out = run_filter(tmp_path, 'Prose {{< record k.a fmt=".6f" expect="< 1e-12" >}} here.\n\n'
                               '{{< record k.b >}}\n\n'
                               '```\n{{< record k.c fmt=".2e" expect="< 1e-12" >}}\n```\n')
    inline, block, text = [line.strip() for line in out.splitlines() if "n=" in line]
    assert inline == ('Prose n=5 context=inline args=Inlines:k.a kwargs=expect=Inlines:< 1e-12,fmt=Inlines:.6f '
                      'missing=Inlines: raw=k.a,.6f,< 1e-12 meta=Inlines:ann here.')
    assert block.startswith("BLOCK n=5 context=block args=Inlines:k.b kwargs= ")
    assert text == ('n=5 context=text args=string:k.c kwargs=expect=string:"< 1e-12",fmt=string:".2e" '
                    'missing=Inlines: raw=k.c,".2e","< 1e-12" meta=Inlines:ann')


def test_value_lua_also_accepts_plain_string_arguments(tmp_path, rendered):
    """Quarto's current code passes argument values as strings, its docs say
    inlines: value.lua stringifies either."""
    values, _, _, source = rendered
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind("index.qmd", source, values, True))
    driver = tmp_path / "driver.lua"
    driver.write_text(f"""
local shortcodes = dofile({json.dumps(str(ROOT / "article" / "_extensions" / "value" / "value.lua"))})
function Pandoc(doc)
  local meta = {{ ["value-bindings"] = {json.dumps(str(bindings))} }}
  local r = shortcodes.value({{ "demo.dk64.unscaled.max_weight" }}, {{ fmt = ".6f" }}, meta, {{}}, "inline")
  local t = shortcodes.value({{ '"demo.dk64.unscaled.max_weight"' }}, {{ fmt = '".2%"' }}, meta, {{}}, "text")
  return pandoc.Pandoc({{ pandoc.Para(r), pandoc.Para({{ pandoc.Str(t) }}) }})
end
""")
    done = subprocess.run([rendermod.pandoc_path(), "-f", "markdown", "-t", "html", "--lua-filter", str(driver)],
                          input="", capture_output=True, text=True, check=True)
    assert 'class="bound-value"' in done.stdout and ">0.921946</a>" in done.stdout
    assert "<p>92.19%</p>" in done.stdout


def test_relative_paths_work_as_the_rule_passes_them(tmp_path, monkeypatch):
    article, values = make_article(tmp_path / "article")
    write_json(tmp_path / "build" / "bindings.json",
               bind("article/index.qmd", article.read_text(encoding="utf-8"), values, True))
    monkeypatch.chdir(tmp_path)
    assert rendermod.main(["article/index.qmd", "--bindings", "build/bindings.json", "--renderer", "pandoc",
                           "--html", "build/article.html", "--md", "build/article.md"]) == 0
    assert (tmp_path / "build" / "article.html").stat().st_size > 0


def test_a_missing_figure_fails_the_render(tmp_path):
    text = "![A figure no rule made](../figures/nope.svg)\n"
    with pytest.raises(rendermod.RenderError, match="nope.svg"):
        bind_and_render(tmp_path / "article", text)


def test_the_quarto_path_runs_standard_quarto_render_commands(tmp_path, monkeypatch):
    """No Quarto here: a stand-in records its arguments and writes the file
    Quarto would, beside the input."""
    article, values = make_article(tmp_path / "article")
    bindings = tmp_path / "bindings.json"
    write_json(bindings, bind(str(article), article.read_text(encoding="utf-8"), values, True))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "quarto"
    fake.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo 1.6.40; exit 0; fi\n'
                    f'echo "$@" >> {tmp_path}/calls\n'
                    'out=$(echo "$@" | sed "s/.*--output \\([^ ]*\\).*/\\1/")\n'
                    f'echo "rendered $4" > {article.parent}/$out\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(rendermod, "check_structure", lambda *args: None)  # the stand-in writes no table
    name = rendermod.render(article, bindings, "auto", tmp_path / "out" / "a.html", tmp_path / "out" / "a.md")
    assert name == "Quarto 1.6.40"
    html_call, md_call = (tmp_path / "calls").read_text().splitlines()
    assert html_call.startswith(f"render {article} --to html --output render-")
    assert md_call.startswith(f"render {article} --to gfm --output render-")
    assert f"-M value-bindings:{bindings.resolve()} -M renderer:Quarto 1.6.40" in html_call
    assert (tmp_path / "out" / "a.html").read_text() == "rendered html\n"
    assert not list(article.parent.glob("render-*"))  # moved, not copied
