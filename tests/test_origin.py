"""The articlekit a new article's requirements.txt names: the one its
author has, from where it was installed (PEP 610's direct_url.json, as pip
and uv write it), with comments saying where from and how to pin another
(articlekit/skeleton/origin.py). Pure functions, fed made-up direct_url
data and git facts."""

import subprocess
from pathlib import Path

import pytest

from articlekit import __version__
from articlekit.skeleton import origin
from articlekit.skeleton.new import new_article
from articlekit.skeleton.origin import Checkout, from_direct_url

ROOT = Path(__file__).resolve().parent.parent
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def no_checkout(path):
    return None


def test_from_an_index_the_version_installed():
    found = from_direct_url(None, "1.2.3", no_checkout)
    assert (found.kind, found.requirement, found.reachable) == ("index", "articlekit==1.2.3", True)
    assert "package index" in found.text()


@pytest.mark.parametrize("asked", ["v1.2.3", None])
def test_from_a_vcs_url_that_repository_at_the_commit_installed(asked):
    direct = {
        "url": "https://github.com/someone/articlekit.git",
        "vcs_info": {"vcs": "git", "commit_id": COMMIT, **({"requested_revision": asked} if asked else {})},
    }
    found = from_direct_url(direct, "1.2.3", no_checkout)
    assert found.requirement == f"articlekit @ git+https://github.com/someone/articlekit.git@{COMMIT}"
    assert found.kind == "vcs" and found.reachable
    assert ("'v1.2.3' asked for" in found.text()) == bool(asked)


def test_a_vcs_subdirectory_is_kept():
    direct = {"url": "https://h/r.git", "subdirectory": "lib", "vcs_info": {"vcs": "git", "commit_id": COMMIT}}
    assert (
        from_direct_url(direct, "1", no_checkout).requirement
        == f"articlekit @ git+https://h/r.git@{COMMIT}#subdirectory=lib"
    )


@pytest.mark.parametrize("editable", [True, False])
def test_from_a_git_checkout_with_a_remote_that_remote_at_the_checkouts_commit(editable):
    direct = {"url": "file:///home/me/articlekit", "dir_info": {"editable": editable} if editable else {}}
    seen = []

    def checkout(path):
        seen.append(path)
        return Checkout("https://github.com/me/articlekit.git", COMMIT, pushed=True, dirty=False)

    found = from_direct_url(direct, "1.2.3", checkout)
    assert seen == [Path("/home/me/articlekit")]
    assert found.requirement == f"articlekit @ git+https://github.com/me/articlekit.git@{COMMIT}"
    assert found.kind == "git checkout" and found.reachable
    assert "/home/me" not in found.text()  # nothing of the author's machine
    assert ("installed editable" in found.text()) == editable


def test_a_commit_not_pushed_and_changes_not_committed_are_said():
    direct = {"url": "file:///w/articlekit", "dir_info": {"editable": True}}
    found = from_direct_url(direct, "1", lambda path: Checkout("https://h/a.git", COMMIT, pushed=False, dirty=True))
    assert "not on the remote yet: push it" in found.text()
    assert "changes not committed" in found.text()


@pytest.mark.parametrize(
    "remote, url",
    [
        ("git@github.com:me/articlekit.git", "ssh://git@github.com/me/articlekit.git"),
        ("ssh://git@host:22/a.git", "ssh://git@host:22/a.git"),
        ("/srv/git/articlekit.git", "file:///srv/git/articlekit.git"),
        ("../upstream", "file:///w/upstream"),
    ],
)
def test_a_remote_is_written_as_pip_reads_a_vcs_url(remote, url):
    direct = {"url": "file:///w/articlekit", "dir_info": {}}
    found = from_direct_url(direct, "1", lambda path: Checkout(remote, COMMIT, pushed=True, dirty=False))
    assert found.requirement == f"articlekit @ git+{url}@{COMMIT}"
    assert found.reachable == (not url.startswith("file:"))
    if not found.reachable:
        assert "CI cannot reach it" in found.text()


@pytest.mark.parametrize(
    "checkout", [None, Checkout(None, COMMIT, pushed=False, dirty=False)], ids=["no git", "no remote"]
)
def test_from_a_folder_without_a_remote_its_path_said_to_be_this_machines(checkout):
    direct = {"url": "file:///home/me/my%20articlekit", "dir_info": {"editable": True}}
    found = from_direct_url(direct, "1.2.3", lambda path: checkout)
    assert found.requirement == "articlekit @ file:///home/me/my%20articlekit"
    assert found.kind == "folder" and not found.reachable
    assert "CI and other machines cannot reach it" in found.text()


def test_from_a_wheel_file_that_file_said_to_be_this_machines():
    url = "file:///tmp/dist/articlekit-1.2.3-py3-none-any.whl"
    direct = {"url": url, "archive_info": {"hashes": {"sha256": "00"}}}
    found = from_direct_url(direct, "1.2.3", no_checkout)
    assert found.requirement == f"articlekit @ {url}"
    assert found.kind == "file" and not found.reachable
    assert "from the wheel" in found.text() and "CI and other machines cannot reach it" in found.text()


def test_from_a_downloadable_archive_that_url():
    url = "https://example.org/articlekit-1.2.3.tar.gz"
    found = from_direct_url({"url": url, "archive_info": {}}, "1.2.3", no_checkout)
    assert (found.requirement, found.reachable) == (f"articlekit @ {url}", True)
    assert "source archive" in found.text() and "cannot reach" not in found.text()


def test_the_text_says_how_to_pin_another_and_ends_with_the_one_requirement():
    text = from_direct_url(None, "1.2.3", no_checkout).text()
    lines = text.splitlines()
    assert [line for line in lines if not line.startswith("#")] == ["articlekit==1.2.3"]
    assert "articlekit @ git+https://github.com/OWNER/articlekit@v1.2.3" in text and "pip install -e" in text


# ---- this machine's articlekit -----------------------------------------------------------


def test_this_checkout_is_found_as_the_folder_it_runs_from():
    direct, version = origin.this_articlekit()
    assert direct["url"] == ROOT.as_uri() and "dir_info" in direct and version == __version__


def test_git_checkout_reads_a_repository_and_refuses_a_plain_folder(tmp_path):
    assert origin.git_checkout(tmp_path) is None

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "f").write_text("x")
    git("add", "f")
    git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "f")
    found = origin.git_checkout(tmp_path)
    assert found.remote is None and len(found.commit) == 40 and not found.dirty and not found.pushed
    git("remote", "add", "origin", "https://example.org/a.git")
    (tmp_path / "f").write_text("y")
    found = origin.git_checkout(tmp_path)
    assert found.remote == "https://example.org/a.git" and found.dirty


def test_new_writes_the_requirement_and_its_comments_into_requirements_txt(tmp_path, monkeypatch):
    url = "https://github.com/someone/articlekit.git"
    direct = {"url": url, "vcs_info": {"vcs": "git", "commit_id": COMMIT, "requested_revision": "v1"}}
    monkeypatch.setattr(origin, "of_this_articlekit", lambda: from_direct_url(direct, __version__))
    new_article(tmp_path / "a")
    text = (tmp_path / "a/requirements.txt").read_text()
    assert [line for line in text.splitlines() if not line.startswith("#")] == [f"articlekit @ git+{url}@{COMMIT}"]
    assert "'v1' asked for" in text and "__" not in text
