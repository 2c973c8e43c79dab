"""A clean working copy of the project, for end-to-end tests and benchmarks.

It holds what a fresh clone would (tracked files) plus files not yet
committed but not ignored, and nothing a rule builds: the copy starts cold.
A copy of an earlier commit (copy_commit) holds that commit's tracked files.
"""

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# How the end-to-end tests build a copy on the fast configuration: strict=false,
# because those tests read the pages, and a timing claim failing on a busy
# machine must not hide them (the strict build is tested in test_workflow.py).
TEST_BUILD = ("snakemake", "--cores", "2", "--configfile", "config/test.yaml", "--config", "strict=false")
# ... with the PDF's and the Word file's date fixed, so that two builds of
# one source compare byte for byte (tests/test_faults.py rebuilds and compares).
TEST_BUILD_ENVIRONMENT = {"SOURCE_DATE_EPOCH": "1767225600"}


def merged_config(root=PROJECT_ROOT, files=("config.yaml", "config/test.yaml")):
    """The config a build of `root` on `files` sees: each experiment's
    declared defaults (experiments/NAME.py), then each file over them, as
    Snakemake merges --configfile files (articlekit.data.config.merged_config).
    config/test.yaml is an override of config.yaml, never a whole config:
    read it through here."""
    from articlekit.data.config import merged_config as merged

    config, _ = merged([str(Path(root) / name) for name in files], root=root)
    return config


class MissingCommit(Exception):
    """The repository cannot give the commit asked for (a shallow clone, a
    copy that is no git checkout)."""


def project_files(root=PROJECT_ROOT):
    """Paths, relative to root, of tracked and untracked-but-not-ignored files."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
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


def copy_commit(dest, commit, root=PROJECT_ROOT):
    """Copy the files `commit` tracked into dest (created), from root's
    history, and return dest as a Path. MissingCommit says why it cannot
    and what would fix it."""

    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True)

    found = git("cat-file", "-e", f"{commit}^{{commit}}")
    if found.returncode != 0:
        if git("rev-parse", "--git-dir").returncode != 0:
            raise MissingCommit(
                f"{root} is not a git checkout, so commit {commit} cannot be read from its "
                "history: run this in a clone of the project"
            )
        shallow = git("rev-parse", "--is-shallow-repository").stdout.decode().strip() == "true"
        why = "this is a shallow clone" if shallow else "no branch fetched here contains it"
        raise MissingCommit(
            f"commit {commit} is not in the repository at {root} ({why}): fetch the full "
            "history (`git fetch --unshallow`, or clone without --depth) and run again"
        )
    archive = git("archive", "--format=tar", commit)
    if archive.returncode != 0:
        raise MissingCommit(f"git archive {commit} failed in {root}: {archive.stderr.decode().strip()}")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest
