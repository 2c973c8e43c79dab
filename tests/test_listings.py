"""listings: the code the article shows is cut from the real source."""

import textwrap

import pytest

from articlekit import listings
from articlekit.jsonio import read_json

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
    with pytest.raises(ValueError, match="multi_head_attention"):
        listings.listing_values(SOURCE)


def test_the_real_implementation_has_every_core_function(repo_root, tmp_path):
    out = tmp_path / "listings.json"
    assert listings.main([str(repo_root / "experiments" / "attention.py"), "--out", str(out)]) == 0
    artifact = read_json(out)
    assert artifact["experiment"] == "listings" and artifact["script"] == "articlekit/listings.py"
    attention = artifact["values"]["attention"]
    assert attention["core_functions"] == listings.CORE
    assert 10 < attention["core_lines"] < attention["lines"]
    namespace = {}
    exec(attention["core_source"], namespace)  # the listing runs as printed
    assert callable(namespace["multi_head_attention"])


def test_the_imports_are_listed_as_written_groups_apart():
    source = "import math\nimport os\n\nimport numpy as np\n\nX = 1\n\n\ndef softmax(x):\n    return x\n"
    assert listings.listing_values(source, core=["softmax"])["imports"] == (
        "import math\nimport os\n\nimport numpy as np\n")
