"""listings: the code the article shows is cut from the real source."""

import json
import textwrap

import pytest
import yaml

from articlekit.data import listings
from articlekit.core.jsonio import read_json

SOURCE = textwrap.dedent('''\
    """Module docstring."""
    import numpy as np


    def softmax(x):
        """Softmax.

        Two docstring lines more.
        """
        # a comment-only line is not code
        e = np.exp(x - x.max())

        return e / e.sum()


    def helper():
        return 1
    ''')


def test_each_top_level_function_is_listed_verbatim():
    values = listings.listing_values(SOURCE, core=["softmax"])
    assert values["functions"]["helper"] == "def helper():\n    return 1\n"
    assert values["functions"]["softmax"].startswith('def softmax(x):\n    """Softmax.')
    assert values["source"] == SOURCE
    assert values["lines"] == len(SOURCE.splitlines())


def test_core_lines_count_code_not_docstrings_comments_or_blank_lines():
    values = listings.listing_values(SOURCE, core=["softmax"])
    assert values["core_lines"] == 3  # def, e = ..., return
    assert '"""' not in values["bare"]["softmax"]
    assert values["core_source"].startswith("import numpy as np\n")


def test_a_missing_core_function_is_an_error():
    with pytest.raises(ValueError, match="a_function_not_there"):
        listings.listing_values(SOURCE, core=["softmax", "a_function_not_there"])


def article_publishing(repo_root):
    """The config's publishing section, as the workflow passes it."""
    return json.dumps(yaml.safe_load((repo_root / "config.yaml").read_text(encoding="utf-8"))["publishing"])


def test_the_real_implementation_has_every_core_function(repo_root, tmp_path, monkeypatch):
    out = tmp_path / "listings.json"
    monkeypatch.chdir(repo_root)  # the listing's source path is the article folder's
    assert listings.main(["--publishing", article_publishing(repo_root), "--out", str(out)]) == 0
    artifact = read_json(out)
    assert artifact["experiment"] == "listings" and artifact["script"] == "articlekit/data/listings.py"
    assert artifact["params"] == {"source": "experiments/attention.py"}
    attention = artifact["values"]["attention"]
    configured = json.loads(article_publishing(repo_root))["listings"]["attention"]["functions"]
    assert attention["core_functions"] == configured
    assert 10 < attention["core_lines"] < attention["lines"]
    namespace = {}
    exec(attention["core_source"], namespace)  # the listing runs as printed
    assert callable(namespace["multi_head_attention"])


def test_the_imports_are_listed_as_written_groups_apart():
    source = "import math\nimport os\n\nimport numpy as np\n\nX = 1\n\n\ndef softmax(x):\n    return x\n"
    assert listings.listing_values(source, core=["softmax"])["imports"] == (
        "import math\nimport os\n\nimport numpy as np\n"
    )


def test_every_configured_listing_is_cut_under_its_own_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "one.py").write_text(SOURCE)
    (tmp_path / "two.py").write_text("def helper():\n    return 2\n")
    out = tmp_path / "listings.json"
    section = {
        "listings": {
            "first": {"source": "one.py", "functions": ["softmax"]},
            "second": {"source": "two.py", "functions": ["helper"]},
        }
    }
    assert listings.main(["--publishing", json.dumps(section), "--out", str(out)]) == 0
    artifact = read_json(out)
    assert artifact["params"] == {"source": {"first": "one.py", "second": "two.py"}}
    assert artifact["values"]["first"]["core_functions"] == ["softmax"]
    assert artifact["values"]["second"]["core_source"].endswith("return 2\n")


def test_a_listing_that_names_a_missing_function_fails_naming_the_config_key(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "one.py").write_text(SOURCE)
    section = {"listings": {"first": {"source": "one.py", "functions": ["softmax", "gone"]}}}
    assert listings.main(["--publishing", json.dumps(section), "--out", str(tmp_path / "out.json")]) == 1
    message = capsys.readouterr().err
    assert "one.py (publishing.listings.first)" in message and "gone" in message


def test_without_listings_configured_it_says_what_to_add(tmp_path, capsys):
    assert listings.main(["--out", str(tmp_path / "out.json")]) == 1
    assert "publishing.listings" in capsys.readouterr().err
