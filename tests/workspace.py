"""A clean working copy of the project, for end-to-end tests and benchmarks.

It holds what a fresh clone would (tracked files) plus files not yet
committed but not ignored, and nothing a rule builds: the copy starts cold.
"""

import os
import shutil
import subprocess
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def project_files(root=PROJECT_ROOT):
    """Paths, relative to root, of tracked and untracked-but-not-ignored files."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout
    return sorted(p for p in set(listed.split("\0")) if p and (Path(root) / p).is_file())


def copy_project(dest, root=PROJECT_ROOT):
    """Copy the project's files into dest (created) and return dest as a Path."""
    dest = Path(dest)
    for rel in project_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(root) / rel, target)
    return dest


def copy_environment(dest):
    """os.environ for commands run in a copy: the copy's own `experiments`
    and `articlekit` come first, not the editable install's (the main tree)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(dest).resolve()), env.get("PYTHONPATH")]))
    return env
