"""Where the author's articlekit came from, as a line of requirements.txt.

A new article's requirements.txt names the articlekit its author has, so
that pip, conda's route and the article's CI install one that exists (there
is no articlekit on the package index to fall back on). The source is read
from the installed distribution's direct_url.json (PEP 610), which pip and uv
write for every install that did not come from an index:

- a VCS URL (`pip install git+URL@TAG`): that repository, at the commit the
  install resolved (`articlekit @ git+URL@COMMIT`);
- a local folder, editable or not: a git checkout with a remote is named by
  that remote at the checkout's commit (`articlekit @ git+REMOTE@COMMIT`),
  anything else by its path (`articlekit @ file:///PATH`, this machine only);
- a wheel or an sdist file: that file (`articlekit @ file:///FILE`, this
  machine only, unless its URL is one CI can reach);
- no direct_url.json: an index, and the version installed (`articlekit==X`).

Each line comes with comments saying where it came from, what CI can and
cannot reach, and how to pin another articlekit. from_direct_url is pure
(the git facts are handed in); this_articlekit and git_checkout read this
machine.
"""

import importlib.metadata
import json
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse


def pin_another(version):
    """How to pin another articlekit: the lines said above the requirement."""
    return [
        "To pin another articlekit, change the line below to one of (pip's syntax):",
        f"  articlekit @ git+https://github.com/OWNER/articlekit@v{version}   (a tag or a commit of its repository)",
        f"  articlekit=={version}   (a release, from a package index that has it)",
        f"  articlekit @ https://HOST/articlekit-{version}-py3-none-any.whl   (a wheel CI can download)",
        "To build with a checkout of articlekit you are changing, run",
        "`pip install -e PATH-OF-THE-CHECKOUT` after `pip install -r requirements.txt`.",
    ]


@dataclass(frozen=True)
class Checkout:
    """What git says of a folder articlekit was installed from."""

    remote: str | None  # the URL of its remote (origin, else the first), as git has it
    commit: str
    pushed: bool  # the commit is on a branch of that remote, as this checkout last fetched it
    dirty: bool  # changes not committed


@dataclass(frozen=True)
class Origin:
    kind: str  # "index", "vcs", "git checkout", "folder", "file"
    version: str  # the version installed
    requirement: str  # the line of requirements.txt
    comments: tuple  # what is said above it, one line each, without "# "
    reachable: bool  # whether a machine other than this one (CI) can install it

    def text(self):
        """The comments, the pinning advice and the requirement, as lines of requirements.txt."""
        said = [*pin_another(self.version), "", *self.comments]
        return "".join(f"# {line}\n" if line else "#\n" for line in said) + self.requirement + "\n"


def file_path(url):
    """file:///a/b%20c -> Path('/a/b c')."""
    return Path(unquote(urlparse(url).path))


SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>[^/:]+):(?P<path>(?!//).+)$")


def pip_url(remote, base):
    """A git remote as pip's VCS URL wants it (without `git+`): an scp-like
    `git@host:owner/repo.git` becomes ssh://, a path a file:// URL (relative
    ones from base, the checkout)."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", remote):
        return remote
    scp = SCP_LIKE.match(remote)
    if scp and not Path(remote).exists():
        user = f"{scp['user']}@" if scp["user"] else ""
        return f"ssh://{user}{scp['host']}/{scp['path']}"
    return (Path(base) / Path(remote).expanduser()).resolve().as_uri()


def from_direct_url(direct_url, version, checkout=lambda path: None):
    """The Origin of an articlekit whose PEP 610 direct_url.json is direct_url
    (a dict, or None for an install from an index) at version; checkout(path)
    gives the Checkout of a local folder, or None when it is not a git
    checkout."""
    if not direct_url:
        return Origin(
            "index",
            version,
            f"articlekit=={version}",
            (f"articlekit {version} from the package index, the release the author of this article had.",),
            True,
        )
    url = direct_url["url"]
    if "vcs_info" in direct_url:
        vcs = direct_url["vcs_info"]
        subdirectory = f"#subdirectory={direct_url['subdirectory']}" if direct_url.get("subdirectory") else ""
        asked = vcs.get("requested_revision")
        return Origin(
            "vcs",
            version,
            f"articlekit @ {vcs['vcs']}+{url}@{vcs['commit_id']}{subdirectory}",
            (
                f"articlekit {version} from its repository, at the commit the author's install resolved"
                + (f" ({asked!r} asked for)." if asked else " (its default branch)."),
            )
            + (
                ("Its URL is a folder of the author's machine: CI cannot reach it.",) if url.startswith("file:") else ()
            ),
            not url.startswith("file:"),
        )
    if "archive_info" in direct_url:
        local = url.startswith("file:")
        kind = "wheel" if url.endswith(".whl") else "source archive"
        return Origin(
            "file",
            version,
            f"articlekit @ {url}",
            (f"articlekit {version} from the {kind} the author installed it from",)
            + (
                (
                    "(a file of the author's machine: CI and other machines cannot reach it; name",
                    "a git URL and tag, a URL of the file they can download, or a release instead).",
                )
                if local
                else ()
            ),
            not local,
        )
    # dir_info: a local folder, installed editable or not
    folder = file_path(url)
    how = "installed editable" if direct_url.get("dir_info", {}).get("editable") else "installed from the folder"
    git = checkout(folder)
    if git and git.remote:
        remote = pip_url(git.remote, folder)
        said = [f"articlekit {version} from the author's git checkout ({how}), named by its remote at the"]
        said.append("commit the checkout is at, so that CI and other machines fetch the same code.")
        if not git.pushed:
            said.append("That commit is not on the remote yet: push it before CI builds this article.")
        if git.dirty:
            said.append("The checkout has changes not committed: they are not in this line; commit and push them.")
        if remote.startswith("file:"):
            said.append("Its remote is a folder of the author's machine: CI cannot reach it.")
        elif remote.startswith("ssh:"):
            said.append("Its remote is an ssh URL: CI needs a key for it, or change it to an https URL.")
        return Origin(
            "git checkout",
            version,
            f"articlekit @ git+{remote}@{git.commit}",
            tuple(said),
            not remote.startswith("file:"),
        )
    return Origin(
        "folder",
        version,
        f"articlekit @ {folder.as_uri()}",
        (
            f"articlekit {version} from a folder of the author's machine ({how}, no git remote):",
            "CI and other machines cannot reach it; push that articlekit to a git host and name",
            "it by its URL and a tag, or name a release.",
        ),
        False,
    )


def git_checkout(folder):
    """The Checkout of folder, or None when it is not in a git work tree (or git is missing)."""

    def git(*args):
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30)
        return done.stdout.strip() if done.returncode == 0 else None

    try:
        commit = git("rev-parse", "--verify", "HEAD")
        if not commit:
            return None
        remotes = (git("remote") or "").split()
        name = "origin" if "origin" in remotes else (remotes[0] if remotes else None)
        remote = git("remote", "get-url", name) if name else None
        pushed = bool(name and git("branch", "--remotes", "--contains", commit, "--list", f"{name}/*"))
        dirty = bool(git("status", "--porcelain", "--", "."))
    except (OSError, subprocess.SubprocessError):
        return None
    return Checkout(remote, commit, pushed, dirty)


def is_source_folder(folder):
    """Whether folder is articlekit's source: its pyproject.toml names the project."""
    try:
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError):
        return False
    return project.get("name") == "articlekit"


def this_articlekit():
    """(direct_url, version) of the articlekit this process imported: the
    installed distribution that holds it, or, when none does (a checkout on
    PYTHONPATH, or an egg-info written beside the source), its folder."""
    import articlekit

    package = Path(articlekit.__file__).resolve().parent
    found = []
    for dist in importlib.metadata.distributions(name="articlekit"):
        text = dist.read_text("direct_url.json")
        found.append((dist, json.loads(text) if text else None))
    # an editable install of the folder it runs from first: the same folder
    # may also hold an egg-info, which is on the path when run from there
    for dist, direct in found:
        if direct and direct.get("dir_info", {}).get("editable"):
            if package.is_relative_to(file_path(direct["url"]).resolve()):
                return direct, dist.version
    for dist, direct in found:
        location = Path(dist.locate_file("")).resolve()
        if package.parent == location and not (direct or {}).get("dir_info", {}).get("editable"):
            if is_source_folder(location):  # an egg-info written beside the source, not an install
                return {"url": location.as_uri(), "dir_info": {}}, dist.version
            return direct, dist.version
    return {"url": package.parent.as_uri(), "dir_info": {}}, articlekit.__version__


def of_this_articlekit():
    """The Origin of the articlekit this process runs."""
    direct, version = this_articlekit()
    return from_direct_url(direct, version, git_checkout)
