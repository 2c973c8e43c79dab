"""Every benchmark starts: `python benchmarks/NAME.py --help` prints its usage
and exits 0, as docs/benchmarks.md runs them, outside pytest.

The benchmarks reuse the tests' helpers (tests/workspace.py, the Quarto
preview client of tests/test_quarto.py), so a helper importable only the
way pytest puts tests/ on sys.path breaks a benchmark that nothing else
runs: `import snakemake_fork` in test_quarto.py stopped
benchmarks/quarto_preview.py before its first line of output.
"""

import subprocess
import sys

import pytest

from tests.workspace import PROJECT_ROOT

pytestmark = pytest.mark.workflow

SCRIPTS = sorted(
    path.name
    for path in (PROJECT_ROOT / "benchmarks").glob("*.py")
    if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
)


def test_the_benchmarks_are_found():
    assert {"build.py", "quarto_preview.py", "preview.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_prints_its_usage(script, tmp_path):
    proc = subprocess.run(
        [sys.executable, f"benchmarks/{script}", "--help"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},  # no PYTHONPATH: as a person runs it
    )
    assert proc.returncode == 0, proc.stderr
    assert script in proc.stdout, proc.stdout[:500]  # its usage names it
