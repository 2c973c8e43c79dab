"""The listings run as shown: every Python block of the rendered
build/article.md, pasted in order into a fresh interpreter, is the code the
experiments ran, needs nothing that is not shown, and gives the experiments'
values on their inputs."""

import json
import re
import subprocess
import sys
import textwrap

import pytest

import yaml

from articlekit.core.jsonio import read_json
from articlekit.data.listings import listing_values

pytestmark = pytest.mark.slow  # reads the article the built_project fixture builds

# What a reader would type after pasting the listings: draw the experiments'
# inputs as their docstrings specify (experiments/example.py, multihead.py)
# and call the functions the listings defined. It imports nothing but json
# and sys: NumPy and every attention function come from the listings.
READER = textwrap.dedent("""
    import json as _json
    import sys as _sys

    _p = _json.loads(_sys.argv[1])
    _out = {}
    _rng = np.random.default_rng(_p["example.params.seed"])
    Q, K, V = (_rng.normal(size=(_p["example.params.n_tokens"], _p["example.params.d_k"])) for _ in "QKV")
    single, w = scaled_dot_product_attention(Q, K, V)
    _out["example.first_row"] = w[0].tolist()
    _out["example.row_sum_max_deviation"] = float(np.max(np.abs(w.sum(axis=-1) - 1.0)))
    _out["example.output_shape"] = list(single.shape)
    mask = causal_mask(len(Q))
    _, w_causal = scaled_dot_product_attention(Q, K, V, mask=mask)
    _out["example.causal.max_masked_weight"] = float(w_causal[mask].max())
    _out["example.causal.visible_per_row"] = [int(n) for n in (w_causal > 0).sum(axis=-1)]
    if "multi_head_attention" in globals():
        _rng = np.random.default_rng(_p["multihead.params.seed"])
        T, d_model = _p["multihead.params.n_tokens"], _p["multihead.params.d_model"]
        X = _rng.normal(size=(T, d_model))
        W_q, W_k, W_v, W_o = (_rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4))
        out, w = multi_head_attention(X, X, W_q, W_k, W_v, W_o, _p["multihead.params.heads"])
        _out["multihead.output_shape"] = list(out.shape)
        _out["multihead.weights_shape"] = list(w.shape)
        _out["multihead.weights"] = w.tolist()
        _, w_causal = multi_head_attention(X, X, W_q, W_k, W_v, W_o, _p["multihead.params.heads"], causal=True)
        _out["multihead.causal.weights_shape"] = list(w_causal.shape)
    if "attention_row_by_row" in globals():
        _out["row_by_row_vs_matrix"] = float(np.max(np.abs(attention_row_by_row(Q, K, V) - single)))
    print(_json.dumps(_out))
""")

PARAMS = [
    "example.params.seed",
    "example.params.n_tokens",
    "example.params.d_k",
    "multihead.params.seed",
    "multihead.params.n_tokens",
    "multihead.params.d_model",
    "multihead.params.heads",
]


def python_listings(markdown):
    """The code of every ```python block, in the order the page shows them."""
    return re.findall(r"^``` ?python\n(.*?)^```[ \t]*$", markdown, re.M | re.S)


@pytest.fixture(scope="module")
def page(built_project):
    markdown = (built_project / "build" / "article.md").read_text(encoding="utf-8")
    values = read_json(built_project / "build" / "values.json")["values"]
    return python_listings(markdown), markdown, values


def run_as_a_reader(code, values, tmp_path):
    """Run `code` then READER in a fresh, isolated interpreter (-I: no
    PYTHONPATH, no project on sys.path): -> the READER's results."""
    script = tmp_path / "pasted.py"
    script.write_text(code + "\n" + READER, encoding="utf-8")
    params = json.dumps({key: values[key] for key in PARAMS})
    done = subprocess.run(
        [sys.executable, "-I", str(script), params], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"the listings do not run as shown:\n{done.stderr}"
    return json.loads(done.stdout)


def test_the_page_shows_python_listings(page):
    listings, _, _ = page
    assert len(listings) >= 2


def test_the_first_listing_alone_is_the_whole_of_single_head_attention(page, tmp_path):
    listings, _, values = page
    got = run_as_a_reader(listings[0], values, tmp_path)
    for key in [
        "example.first_row",
        "example.row_sum_max_deviation",
        "example.output_shape",
        "example.causal.max_masked_weight",
        "example.causal.visible_per_row",
    ]:
        assert got[key] == values[key], key


def test_all_listings_in_order_run_and_give_the_experiments_values(page, tmp_path):
    listings, _, values = page
    got = run_as_a_reader("\n\n".join(listings), values, tmp_path)
    for key in [
        "example.first_row",
        "example.causal.visible_per_row",
        "multihead.output_shape",
        "multihead.weights_shape",
        "multihead.weights",
        "multihead.causal.weights_shape",
    ]:
        assert got[key] == values[key], key
    if "row_by_row_vs_matrix" in got:  # the timing baseline, when the page shows it
        assert got["row_by_row_vs_matrix"] < 1e-12


def core_functions(repo_root):
    """The functions config.yaml's publishing.listings names for the article."""
    config = yaml.safe_load((repo_root / "config.yaml").read_text(encoding="utf-8"))
    return config["publishing"]["listings"]["attention"]["functions"]


def test_the_code_shown_is_the_code_the_experiments_imported(page, repo_root):
    listings, _, _ = page
    core = core_functions(repo_root)
    source = listing_values((repo_root / "experiments" / "attention.py").read_text(encoding="utf-8"), core=core)
    shown = listing_values("\n\n".join(listings), core=core)
    assert shown["imports"] == source["imports"]
    for name, code in shown["functions"].items():
        assert code == source["functions"][name], f"{name} differs from experiments/attention.py"
    assert set(core) <= set(shown["functions"]), "every core function is shown"


def test_the_line_count_the_text_gives_is_that_of_the_code_shown(page, repo_root):
    listings, markdown, values = page
    counted = listing_values("\n\n".join(listings), core=core_functions(repo_root))["core_lines"]
    assert counted == values["listings.attention.core_lines"]
    assert f" {counted} lines of code" in " ".join(markdown.split())
