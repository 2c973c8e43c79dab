"""After a prose edit, the page comes first: its rule carries the highest
Snakemake priority of the article's editions (formats.Format.priority), so
that on a machine with fewer cores than editions the page an author has
open (`quarto preview`, `articlekit preview`, a browser on build/) is
written before the PDF, Word and JATS take their turn.

Through the article a new author starts from, as Snakemake plans it."""

import re
import subprocess
import sys

import pytest

from articlekit.render import formats
from articlekit.skeleton.new import new_article
from tests.workspace import PROJECT_ROOT, copy_environment

pytestmark = pytest.mark.workflow  # runs Snakemake (tests/tiers.py)


def planned_priorities(folder):
    """{rule: priority} of the jobs `snakemake -n` plans in folder (Snakemake
    prints a job's priority only where it is not the default, 0)."""
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n"],
        cwd=folder,
        env=copy_environment(PROJECT_ROOT),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    priorities = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", done.stdout):
        named = re.match(r"(?:local)?rule (\w+):", block)
        if named:
            given = re.search(r"^\s+priority: (\d+)$", block, re.M)
            priorities[named.group(1)] = int(given.group(1)) if given else 0
    return priorities


def test_the_page_is_the_edition_written_first(tmp_path):
    folder = tmp_path / "my-article"
    new_article(folder)
    planned = planned_priorities(folder)
    editions = {name: planned[name] for name in formats.names() if name in planned}
    assert "html" in editions and len(editions) > 1, planned
    assert editions["html"] > max(p for name, p in editions.items() if name != "html"), editions
