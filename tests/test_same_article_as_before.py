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
import re
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


def test_the_article_reads_the_same_but_for_volatile_values(built_project, before, volatile):
    old = (BEFORE / "article.md").read_text(encoding="utf-8").splitlines()
    new = (built_project / "build/article.md").read_text(encoding="utf-8").splitlines()
    assert len(old) == len(new), f"article.md: {len(old)} lines before the move, {len(new)} now"
    bindings = json.loads((built_project / "build/bindings.json").read_text(encoding="utf-8"))["bindings"]
    old_texts, new_texts = printed_texts(before["bindings"], volatile), printed_texts(bindings, volatile)
    for number, (a, b) in enumerate(zip(old, new), 1):
        if a != b:
            assert any(t in a for t in old_texts) and any(t in b for t in new_texts), (
                f"article.md:{number} changed and prints no volatile value:\n- {a}\n+ {b}")


def test_the_audit_judges_every_stable_entry_as_before(built_project, before, volatile):
    """A timing may pass from 'moved as expected' to 'moved unexpectedly'
    between any two builds; every other entry keeps its verdict and value."""
    audit = json.loads((built_project / "build/audit.json").read_text(encoding="utf-8"))
    now = {e["id"]: {"status": e["status"], "regenerated": e["regenerated"]}
           for e in audit["entries"] if not (e["key"] or "").startswith(volatile)}
    then = {i: e for i, e in before["audit"]["entries"].items() if i in now or i not in
            {e["id"] for e in audit["entries"]}}
    assert now == then


def test_the_audit_page_reads_the_same_but_for_volatile_rows(built_project, volatile):
    """Its lines that name no volatile key, and are not the counts (which
    count the timings' verdicts too), are the same lines in the same order."""
    def stable(text):
        return [line for line in text.splitlines()
                if not any(f"`{prefix}" in line or f"**{prefix}" in line for prefix in volatile)
                and not re.fullmatch(r"\|( [\d ]+(of \d+)? \|)+", line)]

    old = stable((BEFORE / "audit.md").read_text(encoding="utf-8"))
    new = stable((built_project / "build/audit.md").read_text(encoding="utf-8"))
    assert old == new
