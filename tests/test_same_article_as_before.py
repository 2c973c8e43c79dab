"""Moving the machinery into a library changed no output of the attention
article (issue 12).

tests/fixtures/before-library/ holds what the last build before the move
made from config/test.yaml (commit 79782fd): the release snapshot that
`articlekit release` froze from it, and its build/article.md and
build/audit.md. This build is diffed against that snapshot with the
project's own diff, and the pages are compared line by line. What may move
is what moves between any two builds: the values under the article's
volatile prefixes (timings, the machine, the build's date), and the lines
that print them.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

BEFORE = Path(__file__).parent / "fixtures" / "before-library"


@pytest.fixture(scope="module")
def before():
    return json.loads((BEFORE / "snapshot.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def volatile(built_project):
    config = yaml.safe_load((built_project / "config" / "test.yaml").read_text(encoding="utf-8"))
    return tuple(config["publishing"]["volatile"])


@pytest.fixture(scope="module")
def diff(built_project, before, tmp_path_factory):
    """This build diffed against the snapshot from before the move."""
    values = json.loads((built_project / "build/values.json").read_text(encoding="utf-8"))["values"]
    for library in ("numpy", "torch"):
        if values.get(f"environment.{library}") != before["values"].get(f"environment.{library}"):
            pytest.skip(f"{library} {values.get(f'environment.{library}')} here, "
                        f"{before['values'].get(f'environment.{library}')} in the fixture: "
                        "a library upgrade is the diff's subject, not this test's")
    out = tmp_path_factory.mktemp("diff")
    snapshot = out / "before-library" / "snapshot.json"
    snapshot.parent.mkdir()
    snapshot.write_text((BEFORE / "snapshot.json").read_text(encoding="utf-8"), encoding="utf-8")
    config = yaml.safe_load((built_project / "config" / "test.yaml").read_text(encoding="utf-8"))
    subprocess.run(
        [sys.executable, "-m", "articlekit", "diff", "--values", "build/values.json",
         "--bindings", "build/bindings.json", "--baseline", "baseline/published.yaml",
         "--publishing", json.dumps(config["publishing"]),
         "--json", str(out / "diff.json"), "--md", str(out / "diff.md"), str(snapshot)],
        cwd=built_project, check=True, capture_output=True, text=True,
    )
    return json.loads((out / "diff.json").read_text(encoding="utf-8"))


def test_no_key_was_added_or_removed(diff):
    assert diff["keys_added"] == [] and diff["keys_removed"] == []


def test_nothing_moved_beyond_its_rule_but_volatile_values(diff, volatile):
    for section in ("numbers", "texts", "printed", "claims", "environment"):
        moved = [row.get("key") for row in diff[section] if not str(row.get("key")).startswith(volatile)]
        assert moved == [], f"{section} moved since the move into a library: {moved}"


def printed_texts(bindings, volatile):
    """The texts printed for volatile keys: the only ones a page may change by."""
    return {b["text"] for b in bindings.values() if b["key"].startswith(volatile) and b["text"]}


@pytest.mark.parametrize("page", ["article.md", "audit.md"])
def test_the_pages_read_the_same_but_for_volatile_values(built_project, before, volatile, page):
    old = (BEFORE / page).read_text(encoding="utf-8").splitlines()
    new = (built_project / "build" / page).read_text(encoding="utf-8").splitlines()
    assert len(old) == len(new), f"{page}: {len(old)} lines before the move, {len(new)} now"
    bindings = json.loads((built_project / "build/bindings.json").read_text(encoding="utf-8"))["bindings"]
    old_texts, new_texts = printed_texts(before["bindings"], volatile), printed_texts(bindings, volatile)
    for number, (a, b) in enumerate(zip(old, new), 1):
        if a != b:
            assert any(t in a for t in old_texts) and any(t in b for t in new_texts), (
                f"{page}:{number} changed and prints no volatile value:\n- {a}\n+ {b}")
