"""The build's provenance as a Workflow Run RO-Crate (build/ro-crate-metadata.json).

The crate lists every file the build read and wrote with its SHA-256; each
job of a rule is a CreateAction with what it read and wrote, the
parameters and library versions its artifact records; the Snakefile is the
workflow, each rule a step; every bound value is an entity of its own,
linked to the artifact it was read from and to the job that wrote that
artifact. roc-validator accepts it for the profile it declares (Provenance
Run Crate 0.5) at the REQUIRED level, and `articlekit verify` reads it back
as the manifest it replaces.
"""

import json
from pathlib import Path

import pytest

from articlekit.core.ledger import Ledger, file_digest
from articlekit.render.metadata import read_metadata
from articlekit.review.crate import NO_LICENSE, build_crate, crate_json, files_view, path_of, entity_id
from articlekit.review.manifest import MANIFEST, ManifestError, load_manifest, write_manifest
from tests.crate_validation import declared_profile, validation_issues

FRONT = """---
title: "A small article"
author:
  - name: Ada Lovelace
    orcid: 0000-0002-1825-0097
license: CC-BY-4.0
version: 1.0.0
---

The sum is {{< value x.total >}}.
"""

ARTIFACT = {
    "experiment": "x",
    "script": "experiments/x.py",
    "params": {"n": 3, "seed": 7},
    "versions": {"python": "3.11.7", "numpy": "2.4.6"},
    "values": {"total": 6},
}

BINDINGS = {
    "bindings": {
        "x.total||": {
            "key": "x.total",
            "fmt": "",
            "text": "6",
            "claim": {"expect": "> 5", "status": "holds"},
            "source": {"artifact": "results/x.json", "script": "experiments/x.py", "experiment": "x"},
            "anchor": "v-x-total",
            "locations": ["article/index.qmd:10"],
        }
    },
    "claims": [],
}


def write(path, text):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text, encoding="utf-8")


@pytest.fixture
def build(tmp_path, monkeypatch):
    """A project built as Snakemake would: two jobs recorded in the ledger
    (the experiment x, the page), its crate written as rule manifest does."""
    monkeypatch.chdir(tmp_path)
    write("Snakefile", "rule all:\n    input: 'build/article.html'\n")
    write("config.yaml", "x: {n: 3, seed: 7}\n")
    write("experiments/x.py", "def run(params): ...\n")
    write("article/index.qmd", FRONT)
    ledger = Ledger(".snakemake/articlekit/ledger.json")
    ledger.run_started({"experiments/x.py": file_digest("experiments/x.py")})
    for rule, path, text, inputs in (
        ("x", "results/x.json", json.dumps(ARTIFACT), ["experiments/x.py"]),
        ("bind", "build/bindings.json", json.dumps(BINDINGS), ["article/index.qmd", "results/x.json"]),
        ("html", "build/article.html", "<p>The sum is 6.</p>", ["article/index.qmd", "build/bindings.json"]),
    ):
        ledger.running(rule, [path], inputs)
        write(path, text)
        ledger.finished([path])
    outputs = ["results/x.json", "build/bindings.json", "build/article.html"]
    view = write_manifest(
        MANIFEST, ledger, outputs, ["Snakefile", "config.yaml"], BINDINGS, read_metadata("article/index.qmd")
    )
    crate = json.loads(Path(MANIFEST).read_text(encoding="utf-8"))
    return tmp_path, view, {e["@id"]: e for e in crate["@graph"]}


def ids(value):
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


def test_every_file_read_and_written_is_an_entity_with_its_sha256(build):
    _, view, graph = build
    for path in ["results/x.json", "build/article.html", "Snakefile", "config.yaml", "experiments/x.py"]:
        entity = graph[entity_id(path, "build")]
        assert entity["sha256"] == file_digest(path) and entity["name"] == path
    assert set(ids(graph["./"]["hasPart"])) >= {entity_id(p, "build") for p in ["results/x.json", "Snakefile"]}


def test_the_crate_reads_back_as_the_manifest_verify_holds_the_build_to(build):
    _, view, _ = build
    assert load_manifest(MANIFEST) == view
    assert view["outputs"]["build/article.html"]["rule"] == "html"
    assert view["inputs"]["article/index.qmd"]["read_by"] == ["bind", "html"]
    assert view["inputs"]["config.yaml"]["read_by"] == ["the plan"]


def test_each_job_is_a_create_action_with_its_inputs_outputs_parameters_and_library_versions(build):
    _, _, graph = build
    (job,) = [e for i, e in graph.items() if i.startswith("#job-") and "experiment x" in e["name"]]
    assert entity_id("results/x.json", "build") in ids(job["result"])
    assert entity_id("experiments/x.py", "build") in ids(job["object"])
    params = {graph[i]["name"]: graph[i]["value"] for i in ids(job["object"]) if graph[i]["@type"] == "PropertyValue"}
    assert params == {"n": "3", "seed": "7"}
    software = {graph[i]["name"]: graph[i].get("softwareVersion") for i in ids(job["instrument"])}
    assert software["numpy"] == "2.4.6" and software["python"] == "3.11.7" and "articlekit" in software
    # the rule it ran is a tool, a step of the workflow, orchestrated by Snakemake
    tool = graph["#rule-x"]
    assert tool["@id"] in ids(job["instrument"]) and graph["#step-x"]["workExample"] == {"@id": "#rule-x"}
    workflow = graph[graph["./"]["mainEntity"]["@id"]]
    assert workflow["name"] and "ComputationalWorkflow" in workflow["@type"] and workflow["@id"] == "../Snakefile"
    control = next(e for e in graph.values() if e["@type"] == "ControlAction" and e["object"] == {"@id": job["@id"]})
    assert control["instrument"] == {"@id": "#step-x"} and control["@id"] in ids(graph["#organize"]["object"])


def test_every_bound_value_is_an_entity_linked_to_its_artifact_and_the_run_that_made_it(build):
    _, _, graph = build
    value = graph["#value-v-x-total"]
    assert value["@type"] == "PropertyValue" and value["propertyID"] == "x.total" and value["value"] == "6"
    assert value["isBasedOn"] == {"@id": "../results/x.json"}
    assert value["url"] == "article.html#v-x-total"  # the page's provenance row of the number
    assert "> 5 (holds)" in value["description"]
    (job,) = [e for e in graph.values() if e["@type"] == "CreateAction" and value["@id"] in ids(e.get("result", []))]
    assert "../results/x.json" in ids(job["result"]) and job["name"].startswith("rule x")


def test_the_root_carries_the_article_s_metadata_from_its_front_matter(build):
    _, _, graph = build
    root = graph["./"]
    assert root["name"] == "A small article" and root["license"] == "https://spdx.org/licenses/CC-BY-4.0"
    assert [graph[a]["name"] for a in ids(root["author"])] == ["Ada Lovelace"]
    assert root["version"] == "1.0.0"


def test_without_a_licence_the_crate_says_so_in_words_rather_than_invent_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("Snakefile", "")
    view = {"outputs": {}, "inputs": {"Snakefile": {"sha256": file_digest("Snakefile"), "read_by": ["the plan"]}}}
    crate = json.loads(crate_json(build_crate(view, Ledger("ledger.json"), "build")))
    root = next(e for e in crate["@graph"] if e["@id"] == "./")
    assert root["license"] == NO_LICENSE and "license:" in NO_LICENSE


@pytest.mark.parametrize(
    "path, identifier",
    [
        ("results/a b.json", "../results/a b.json"),  # rocrate quotes it into the @id: ../results/a%20b.json
        ("build/article.html", "article.html"),
        ("/usr/lib/y.py", "file:///usr/lib/y.py"),  # outside the project: its URI
    ],
)
def test_a_file_s_path_and_its_id_in_the_crate_make_each_other(tmp_path, monkeypatch, path, identifier):
    monkeypatch.chdir(tmp_path)
    assert entity_id(path, "build") == identifier
    assert path_of(identifier.replace(" ", "%20"), "build") == path


def test_verify_refuses_a_file_that_is_no_build_s_crate(tmp_path):
    crate = tmp_path / "ro-crate-metadata.json"
    crate.write_text(json.dumps({"@context": "https://w3id.org/ro/crate/1.1/context", "@graph": [{"@id": "./"}]}))
    with pytest.raises(ManifestError, match="not the RO-Crate of a build: rebuild it"):
        load_manifest(crate)
    crate.write_text(json.dumps({"outputs": {}, "inputs": {}}))  # build/manifest.json's old form
    with pytest.raises(ManifestError, match="not an RO-Crate"):
        load_manifest(crate)
    assert files_view({"@graph": [{"@id": "#build"}]}) == {"outputs": {}, "inputs": {}}


@pytest.mark.workflow
def test_roc_validator_accepts_the_crate_for_the_profile_it_declares(build, monkeypatch, tmp_path_factory):
    folder, _, _ = build
    profile = declared_profile(folder / "build")
    assert profile == "provenance-run-crate-0.5"
    assert validation_issues(folder / "build", profile, monkeypatch, cache=tmp_path_factory.mktemp("cache") / "c") == []


@pytest.mark.workflow
def test_roc_validator_refuses_a_crate_that_breaks_the_profile(build, monkeypatch, tmp_path_factory):
    # the validator can fail: a step no workflow names, and no licence
    folder, _, _ = build
    crate = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    for entity in crate["@graph"]:
        if "ComputationalWorkflow" in entity.get("@type", []):
            entity.pop("step")
        if entity["@id"] == "./":
            entity.pop("license")
    (folder / MANIFEST).write_text(json.dumps(crate), encoding="utf-8")
    issues = validation_issues(
        folder / "build", "provenance-run-crate-0.5", monkeypatch, cache=tmp_path_factory.mktemp("cache") / "c"
    )
    said = " ".join(message for _, message in issues)
    assert "HowToStep must be referred to from a ComputationalWorkflow via step" in said and "license" in said


# --- the journal's bundle carries it ---------------------------------------------


def jats_zip(path, extra=None):
    from articlekit.render.formats import jats

    figures = {"figures/a.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>"}
    entries = {"article.xml": b"<article/>", "manifest.xml": jats.manifest(figures), **figures, **(extra or {})}
    Path(path).write_bytes(jats.zip_bytes(entries))
    return entries


def test_the_journal_bundle_is_the_jats_edition_with_the_crate_listed_in_its_meca_manifest(tmp_path):
    from lxml import etree

    from articlekit.render.formats import jats
    from articlekit.review.journal_bundle import write_bundle

    edition = jats_zip(tmp_path / "article.jats.zip")
    crate = tmp_path / "ro-crate-metadata.json"
    crate.write_text('{"@graph": []}')
    write_bundle(tmp_path / "article.jats.zip", crate, tmp_path / "article.meca.zip")
    bundle = jats.read_bundle(tmp_path / "article.meca.zip")
    assert bundle["ro-crate-metadata.json"] == crate.read_bytes()
    assert {n: b for n, b in bundle.items() if n not in ("manifest.xml", "ro-crate-metadata.json")} == {
        n: b for n, b in edition.items() if n != "manifest.xml"
    }
    assert etree.DTD(str(jats.MANIFEST_DTD)).validate(etree.fromstring(bundle["manifest.xml"]))
    assert jats.manifest_items(bundle["manifest.xml"], "bundle") == set(bundle) - {"manifest.xml"}


def test_the_journal_bundle_refuses_an_edition_that_holds_a_crate_already_and_a_crate_that_is_not_json(tmp_path):
    from articlekit.review.journal_bundle import BundleError, write_bundle

    crate = tmp_path / "ro-crate-metadata.json"
    crate.write_text("{not json")
    jats_zip(tmp_path / "a.zip")
    with pytest.raises(BundleError, match="the crate is not JSON"):
        write_bundle(tmp_path / "a.zip", crate, tmp_path / "out.zip")
    crate.write_text("{}")
    jats_zip(tmp_path / "b.zip", {"ro-crate-metadata.json": b"{}"})
    with pytest.raises(BundleError, match="already holds a ro-crate-metadata.json"):
        write_bundle(tmp_path / "b.zip", crate, tmp_path / "out.zip")
    assert not (tmp_path / "out.zip").exists()
