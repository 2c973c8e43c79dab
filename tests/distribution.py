"""What articlekit's distribution carries, against what git tracks.

Every file git tracks under articlekit/ must be in the wheel and the sdist,
and nothing else under articlekit/ (no __pycache__, nothing a build or a
test wrote there): the wheel once lacked articlekit/render/formats/, and an
installed articlekit could not build an article (pyproject.toml, MANIFEST.in).

- shipped(root): the files under articlekit/ that MANIFEST.in selects and
  that lie in a package pyproject.toml's [tool.setuptools.packages.find]
  finds: what include-package-data puts in the wheel, read without a build
  (tests/test_layout.py checks every data file is among them);
- problems(archive, root): a built wheel's or sdist's files against
  `git ls-files articlekit` (tests/test_wheel.py, on a clean clone);
- `python -m tests.distribution DIST...`: the same check of built files,
  by hand (`python -m build`, then this, then `twine check dist/*`).
"""

import contextlib
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tracked(root=ROOT):
    """The files git tracks under articlekit/, as POSIX paths relative to root."""
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--", "articlekit"], check=True, capture_output=True, text=True
    ).stdout
    return {name for name in out.split("\0") if name}


def found_packages(root=ROOT):
    """The packages setuptools finds, by pyproject.toml's [tool.setuptools.packages.find]."""
    import setuptools

    find = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"][
        "find"
    ]
    finder = setuptools.find_namespace_packages if find.get("namespaces", True) else setuptools.find_packages
    return set(finder(str(root), include=find.get("include", ("*",)), exclude=find.get("exclude", ())))


def shipped(root=ROOT):
    """The files under articlekit/ that the wheel carries, as POSIX paths relative to root."""
    from setuptools.command.egg_info import FileList

    selected = FileList()
    with contextlib.chdir(root):  # setuptools' graft globs from the working directory
        for line in (root / "MANIFEST.in").read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                selected.process_template_line(line)
    packages = found_packages(root)
    files = {Path(name).as_posix() for name in selected.files}
    return {
        name
        for name in files
        if name.startswith("articlekit/") and name.rsplit("/", 1)[0].replace("/", ".") in packages
    }


def archive_files(archive):
    """The files under articlekit/ in a wheel (.whl) or an sdist (.tar.gz)."""
    archive = Path(archive)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as whl:
            names = [name for name in whl.namelist() if not name.endswith("/")]
    else:
        with tarfile.open(archive) as sdist:
            # the sdist's files sit in its top folder, articlekit-VERSION/
            names = [
                member.name.split("/", 1)[1] for member in sdist.getmembers() if member.isfile() and "/" in member.name
            ]
    return {name for name in names if name.startswith("articlekit/")}


def problems(archive, root=ROOT):
    """What is wrong with a built wheel or sdist: the tracked files it lacks,
    and the files under articlekit/ it carries that git does not track."""
    expected, carried = tracked(root), archive_files(archive)
    said = []
    if expected - carried:
        said.append(
            f"{Path(archive).name} lacks {len(expected - carried)} tracked file(s): {sorted(expected - carried)}"
        )
    if carried - expected:
        said.append(
            f"{Path(archive).name} carries {len(carried - expected)} untracked file(s): {sorted(carried - expected)}"
        )
    return said


def main(paths):
    said = [problem for path in paths for problem in problems(path)]
    for line in said or [f"{len(paths)} archive(s) carry exactly the {len(tracked())} tracked files under articlekit/"]:
        print(line)
    return 1 if said or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
