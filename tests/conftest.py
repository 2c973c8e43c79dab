"""Shared fixtures: where the project is and its fast test configuration."""

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root():
    """The project's root folder (where Snakefile and config.yaml live)."""
    return ROOT


@pytest.fixture(scope="session")
def test_config():
    """config/test.yaml as a dict: the same keys as config.yaml, tiny sizes."""
    with open(ROOT / "config" / "test.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)


@pytest.fixture
def params(test_config):
    """params("scaling") -> a fresh copy of that experiment's test parameters,
    as its rule would pass them (timing also gets `threads`)."""

    def section(name):
        p = dict(test_config.get(name) or {})
        if name == "timing":
            p["threads"] = 1
        return p

    return section
