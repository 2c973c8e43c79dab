"""articlekit knows no article: what it knows of this one comes from the
article's config, never from its own code.

The names it must not know are this article's: its experiments, its
libraries, and every key and key pattern its `publishing:` section declares
(which keys are error measures, computed in float32, a timing's spread,
per-build, where a run happened, the machine). They are read from
config.yaml, so a key the article declares tomorrow is covered too. Found in
articlekit's code (a string its Python holds, a token of its rules, a string
of its Lua filters), such a name is a rule of this article that a second
article would inherit. Docstrings and comments may name them: they are the
documentation, and examples read best with real keys. The skeleton's
template is an article of its own and is not looked at.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest
import yaml

from articlekit.core.jsonio import read_json
from articlekit.data.baseline import CLASSES
from articlekit.data.environment import PREFIX
from articlekit.experiment.measure import BETWEEN_RUNS_FIELDS, RATIO_FIELDS, TIME_FIELDS
from articlekit.data.publishing import parse

ROOT = Path(__file__).resolve().parent.parent
ARTICLEKIT = ROOT / "articlekit"
TEMPLATE = ARTICLEKIT / "skeleton" / "article"

# The publishing keys that name this article's keys.
KEY_NAMING = ("machine", "error_measures", "single_precision", "spread", "per_build", "where_run", "built_at")

# Words that are articlekit's own, whatever the article calls its keys: the
# baseline's agreement classes (one is `timing`, the same word as this
# article's experiment), the environment record's prefix (`environment.`,
# which an article's environment experiment writes under), the parts of a
# measured value a claim reads (X.estimate, X.low, X.high) and the float
# formats the ULP rule counts in, and the fields of what
# articlekit.experiment.measure returns (samples_ms, ratios, a value between
# runs' runs and outliers, ...), and the attributes of Markdown the prose
# check allows (a figure's width, whatever a timing calls its interval's).
LIBRARY_WORDS = {
    "width",
    *CLASSES,
    PREFIX.rstrip("."),
    "estimate",
    "low",
    "high",
    "float32",
    "float64",
    "python",
    *TIME_FIELDS,
    *RATIO_FIELDS,
    *BETWEEN_RUNS_FIELDS,
}


def article_names(config):
    """This article's names: its experiments, its libraries, and the words
    of each key and pattern its publishing section declares ("*_deviation*"
    gives "_deviation": a part of a key, found inside a longer one)."""
    publishing = config["publishing"]
    names = set(config["experiments"]) | set(publishing["libraries"])
    for setting in KEY_NAMING:
        declared = publishing.get(setting) or []
        for pattern in [declared] if isinstance(declared, str) else declared:
            names.update(part for part in re.split(r"[.*]", pattern) if part.strip("_"))
    return names - LIBRARY_WORDS


def name_pattern(names):
    """A name with `_` or a digit in it (max_abs_diff, q1_ms) is found
    anywhere in a text; a plain word (parity, load) only where it is used as
    a key: the whole text, or next to a dot (`parity.`, `.load.`), so that
    the English word "load" in a message is not taken for the key."""
    compound, plain = (
        sorted(n for n in names if re.search(r"[_\d]", n)),
        sorted(n for n in names if not re.search(r"[_\d]", n)),
    )
    alternatives = [
        (r"" if n.startswith("_") else r"(?<![A-Za-z0-9])")
        + re.escape(n)
        + (r"" if n.endswith("_") else r"(?![A-Za-z0-9])")
        for n in compound
    ]
    alternatives += [rf"^{re.escape(n)}$|(?<![\w.]){re.escape(n)}\.|\.{re.escape(n)}(?![\w])" for n in plain]
    return re.compile("|".join(alternatives))


def python_texts(source):
    """(line, text) of each string a Python module holds, docstrings aside
    (comments are not in the tree)."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and isinstance(node.body[0].value.value, str)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def rule_texts(source):
    """(line, text) of each string and name of a Snakemake file, comments aside."""
    return [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type in (tokenize.STRING, tokenize.NAME)
    ]


_LUA_TOKEN = re.compile(
    r"""
    (?P<comment>--\[(?P<ce>=*)\[.*?\](?P=ce)\]|--[^\n]*)          # --[[ block ]] or -- to the line's end
  | \[(?P<le>=*)\[(?P<long>.*?)\](?P=le)\]                       # [[ a long string ]]
  | "(?P<dq>(?:[^"\\\n]|\\.)*)" | '(?P<sq>(?:[^'\\\n]|\\.)*)'
""",
    re.VERBOSE | re.DOTALL,
)


def lua_texts(source):
    """(line, text) of each string of a Lua filter, comments aside."""
    return [
        (source.count("\n", 0, token.start()) + 1, next(t for t in token.group("long", "dq", "sq") if t is not None))
        for token in _LUA_TOKEN.finditer(source)
        if token.group("comment") is None
    ]


READERS = {".py": python_texts, ".smk": rule_texts, ".lua": lua_texts}


def code_texts(path):
    reader = rule_texts if path.name == "Snakefile" else READERS.get(path.suffix)
    return reader(path.read_text(encoding="utf-8")) if reader else []


def found_in(folder, names):
    pattern = name_pattern(names)
    found = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or TEMPLATE in path.parents or "__pycache__" in path.parts:
            continue
        for line, text in code_texts(path):
            for match in pattern.finditer(text):
                found.append(
                    f"{path.relative_to(folder.parent)}:{line}: {match.group(0).strip('.')!r} in {text[:80]!r}"
                )
    return found


@pytest.mark.workflow  # reads every module of the package: a whole-package scan (tests/tiers.py)
def test_articlekit_code_names_none_of_this_articles_keys():
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    names = article_names(config)
    assert {"max_abs_diff", "q1_ms", "slurm_job_id", "cpu_model", "parity", "torch"} <= names  # what it reads
    found = found_in(ARTICLEKIT, names)
    assert found == [], (
        "articlekit's code names this article's keys; say it in the article's publishing: "
        "section (articlekit/data/publishing.py) instead:\n" + "\n".join(found)
    )


# ---- the search finds what it must, and only that -----------------------------------


def test_a_name_in_code_is_found_and_in_documentation_is_not(tmp_path):
    names = {"max_abs_diff", "_deviation", "parity", "load", "samples_ms"}
    library = tmp_path / "lib"
    (library / "rules").mkdir(parents=True)
    (library / "quiet.py").write_text(
        '"""A module about parity.sdpa.max_abs_diff (documentation)."""\n'
        "# a comment on timing.load.before\n"
        "def f(x):\n"
        '    """Judges parity.x and _deviation keys."""\n'
        '    return "could not load the file" + " parity of two numbers"\n',
        encoding="utf-8",
    )
    (library / "loud.py").write_text(
        'import re\nERROR = re.compile(r"(max_abs_diff|_deviation)")\n'
        'def f(key):\n    return key.startswith("parity.") or key.endswith(".samples_ms") or ".load." in key\n',
        encoding="utf-8",
    )
    (library / "rules" / "x.smk").write_text('# parity.\nrule a:\n    params: k="parity.x"\n', encoding="utf-8")
    (library / "f.lua").write_text(
        '--[[ parity.x in a block\n "parity.y" ]]\nlocal k = "row_sum_max_deviation" -- "parity.z"\n'
        "local t = [[\nparity.w]]\n",
        encoding="utf-8",
    )
    found = found_in(library, names)
    assert [line.split(": ")[0] for line in found] == [
        "lib/f.lua:3",
        "lib/f.lua:4",
        "lib/loud.py:2",
        "lib/loud.py:2",
        "lib/loud.py:4",
        "lib/loud.py:4",
        "lib/loud.py:4",
        "lib/rules/x.smk:3",
    ]


def test_the_article_names_are_read_from_its_config():
    config = {
        "experiments": {"sweep": {}, "environment": {}},
        "publishing": {
            "libraries": {"python": "Python", "scipy": "SciPy"},
            "error_measures": ["*rel_err*"],
            "spread": ["sweep.*.q1_ms"],
            "machine": ["environment.gpu_name"],
            "built_at": "environment.when",
        },
    }
    assert article_names(config) == {"sweep", "scipy", "rel_err", "q1_ms", "gpu_name", "when"}


# ---- the other articles get none of this one's rules ---------------------------------

OTHER_ARTICLES = [ROOT / "examples" / "summation" / "config.yaml", TEMPLATE / "config.yaml"]


def judgements(publishing, key):
    return {
        "error measure": publishing.is_error_measure(key),
        "float32": publishing.is_single_precision(key),
        "spread": publishing.is_spread(key),
        "per build": publishing.is_per_build(key),
        "where run": publishing.is_where_run(key),
        "volatile": publishing.is_volatile(key),
        "machine": key in publishing.machine,
        "built at": key == publishing.built_at,
    }


@pytest.mark.parametrize("config_file", OTHER_ARTICLES, ids=lambda p: p.parent.name)
def test_another_article_inherits_none_of_this_articles_rules(config_file):
    """Every key this article's publishing section treats specially is, for
    another article that declares nothing of the kind, an ordinary key."""
    this = parse(yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))["publishing"])
    other = parse(yaml.safe_load(config_file.read_text(encoding="utf-8")).get("publishing"))
    (release,) = (ROOT / "releases").glob("*/snapshot.json")  # every key of a full build of this article
    keys = read_json(release)["values"]
    special = {key: [rule for rule, applies in judgements(this, key).items() if applies] for key in keys}
    special = {key: rules for key, rules in special.items() if rules}
    assert len(special) > 50  # its error measures, float32 results, timings, environment
    inherited = {key: [rule for rule, applies in judgements(other, key).items() if applies] for key in special}
    assert {key: rules for key, rules in inherited.items() if rules} == {}


def test_this_articles_error_measures_are_ordinary_floats_in_the_summation_example():
    """The same release and the same build, judged by each article's
    publishing section: a few ULPs of 1.0 on this article's small error
    measures are noise here and a change there (thousands of ULPs of
    themselves, or more)."""
    from articlekit.review.diff import compare
    from articlekit.review.snapshot import load_snapshot

    (release,) = (ROOT / "releases").glob("*/snapshot.json")
    snapshot = load_snapshot(release)
    this = parse(yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))["publishing"])
    summation = parse(yaml.safe_load(OTHER_ARTICLES[0].read_text(encoding="utf-8"))["publishing"])
    moved = sorted(
        key
        for key, value in snapshot["values"].items()
        if this.is_error_measure(key)
        and not this.is_volatile(key)
        and isinstance(value, float)
        and 0 < abs(value) < 2.0**-10
    )
    assert len(moved) > 5
    values = dict(snapshot["values"], **{key: snapshot["values"][key] + 4 * 2.0**-52 for key in moved})
    build = {"values": values, "sources": snapshot["sources"], "versions": snapshot["versions"]}
    here = compare(snapshot, build, {"bindings": snapshot["bindings"]}, publishing=this)
    there = compare(snapshot, build, {"bindings": snapshot["bindings"]}, publishing=summation)
    assert sorted(r["key"] for r in here["within_rule"]) == moved and here["numbers"] == []
    assert sorted(r["key"] for r in there["numbers"]) == moved and there["within_rule"] == []
