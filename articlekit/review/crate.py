"""The build's provenance as a Workflow Run RO-Crate: build/ro-crate-metadata.json.

RO-Crate is the field's standard for a research object's files and how
they were made; its Workflow Run profiles (Process Run, Workflow Run,
Provenance Run Crate, 0.5) are what Galaxy, Nextflow's nf-prov and CWL's
runcrate write. This module turns the manifest's record of a build (every
file it wrote and read, with its SHA-256 and rule: articlekit/review/manifest.py)
into one, with the `rocrate` package:

- the crate's root is build/: a file of the project is named relative to it
  (../results/attention.json), a file outside the project (an installed
  articlekit module) by its file:// URI; each carries its sha256;
- the Snakefile is the workflow (ComputationalWorkflow and HowTo), each rule
  a HowToStep whose tool (a SoftwareApplication) each of its jobs ran;
- the whole build is one CreateAction (instrument: the Snakefile, object:
  what it read, result: what it wrote), which Snakemake's OrganizeAction
  made, with one ControlAction per job;
- each job (the ledger's outputs of one rule started at one time) is a
  CreateAction with its inputs, its outputs, the parameters and library
  versions its artifact records (an experiment's), and articlekit's version;
- beyond what workflow engines write: every bound value is an entity of its
  own (#value-KEY, a PropertyValue): its key, the text the article prints,
  its claim and verdict, the page anchor that shows it, and the artifact it
  was read from (isBasedOn), listed in the result of the job that wrote
  that artifact. A reader's tool goes from a number on the page (its
  anchor) to the run that made it.

`files_view` reads a crate back into the manifest's view, which is what
`articlekit verify` holds the build to.
"""

import json
import os
from collections import defaultdict
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from articlekit.core.errors import ArticlekitError
from articlekit.core.ledger import now

METADATA_NAME = "ro-crate-metadata.json"
RO_CRATE_VERSION = "1.1"

# The profiles the crate conforms to, each a CreativeWork of the crate.
PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": ("Process Run Crate", "0.5"),
    "https://w3id.org/ro/wfrun/workflow/0.5": ("Workflow Run Crate", "0.5"),
    "https://w3id.org/ro/wfrun/provenance/0.5": ("Provenance Run Crate", "0.5"),
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0": ("Workflow RO-Crate", "1.0"),
}
# The profile the crate is validated against (the strictest it declares).
DECLARED_PROFILE = "https://w3id.org/ro/wfrun/provenance/0.5"

SNAKEMAKE_LANGUAGE = {
    "@id": "https://w3id.org/workflowhub/workflow-ro-crate#snakemake",
    "@type": "ComputerLanguage",
    "name": "Snakemake",
    "identifier": {"@id": "https://snakemake.readthedocs.io"},
    "url": {"@id": "https://snakemake.readthedocs.io"},
}

MEDIA_TYPES = {
    ".json": "application/json",
    ".html": "text/html",
    ".md": "text/markdown",
    ".qmd": "text/markdown",
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".zip": "application/zip",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".py": "text/x-python",
    ".txt": "text/plain",
    ".bib": "application/x-bibtex",
    ".css": "text/css",
    ".lua": "text/x-lua",
    ".smk": "text/x-snakemake",
    ".typ": "text/x-typst",
    ".dtd": "application/xml-dtd",
    ".csl": "application/vnd.citationstyles.style+xml",
    ".tsv": "text/tab-separated-values",
    ".rst": "text/x-rst",
}


NO_LICENSE = (
    "No licence is stated: the article's front matter has no license: (an SPDX identifier such as CC-BY-4.0). "
    "Until it has one, its authors reserve all rights."
)


def spdx_url(licence):
    """An SPDX identifier as its URL (as RO-Crate prefers); a URL or any
    other text as it is."""
    if licence.startswith(("http://", "https://")) or " " in licence:
        return licence
    return f"https://spdx.org/licenses/{licence}"


class CrateError(ArticlekitError):
    pass


# --- names: a path of the project <-> an @id of the crate rooted at build/ -----


def entity_id(path, root):
    """Where a file lies from the crate: its path relative to the crate's
    root where it lies in the project (rocrate quotes it into the @id),
    else its file:// URI (quoted already)."""
    absolute = Path(os.path.abspath(path))
    project = Path(os.path.abspath(root)).parent
    if absolute.is_relative_to(project):
        return os.path.relpath(absolute, Path(os.path.abspath(root))).replace(os.sep, "/")
    return absolute.as_uri()


def path_of(identifier, root):
    """The path the manifest names for a file's @id (entity_id's inverse):
    relative to the project for a file of it, else absolute."""
    if identifier.startswith("file://"):
        return unquote(identifier[len("file://") :])
    project_relative = PurePosixPath(os.path.normpath(PurePosixPath(Path(root).name) / unquote(identifier)))
    return project_relative.as_posix()


# --- what the build did: the ledger's jobs -----------------------------------


def jobs_of(ledger, outputs):
    """[(rule, started, finished, [outputs], [inputs])]: the ledger's outputs
    grouped by the job that wrote them (one rule, one start, one input list)."""
    grouped = defaultdict(list)
    for path in outputs:
        entry = ledger.entry(path) or {}
        grouped[(entry.get("rule") or "?", entry.get("started") or "", tuple(entry.get("inputs") or ()))].append(
            (path, entry.get("finished"))
        )
    jobs = []
    for (rule, started, inputs), written in sorted(grouped.items()):
        finished = max((f for _, f in written if f), default=None)
        jobs.append((rule, started, finished, sorted(p for p, _ in written), list(inputs)))
    return jobs


def artifact_record(path):
    """An experiment's artifact's experiment, params and versions ({} for
    any other file, or one that is not JSON)."""
    if not str(path).endswith(".json"):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or "experiment" not in document:
        return {}
    return {part: document.get(part) for part in ("experiment", "script", "params", "versions")}


# --- the crate ---------------------------------------------------------------


def slug(text):
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in str(text))


def build_crate(manifest, ledger, root="build", bindings=None, metadata=None, software=None):
    """The rocrate.ROCrate of a build: manifest is build_manifest's view
    (outputs and inputs with digests), ledger the build's Ledger, bindings
    the bindings document (build/bindings.json), metadata the article's
    (articlekit.render.metadata.ArticleMetadata), software
    {name: version} of the engine and articlekit."""
    from rocrate.model.contextentity import ContextEntity
    from rocrate.model.data_entity import DataEntity
    from rocrate.model.file import File
    from rocrate.rocrate import ROCrate

    software = software or {}
    # RO-Crate 1.1: what the Workflow Run Crate profiles (0.5) are written
    # against; sha256 is schema.org's pending term, which later RO-Crate
    # contexts name, added to the 1.1 context as RO-Crate allows
    crate = ROCrate(gen_preview=False, version=RO_CRATE_VERSION)
    crate.metadata.extra_terms["sha256"] = "http://schema.org/sha256"

    def add(identifier, kind, **properties):
        return crate.add(ContextEntity(crate, identifier, properties={"@type": kind, **properties}))

    def ref(entity):
        return {"@id": entity if isinstance(entity, str) else entity.id}

    # the files, each with its digest; the project's Snakefile is the workflow
    snakefile = next((p for p in manifest["inputs"] if PurePosixPath(p).name == "Snakefile" and "/" not in p), None)
    files = {}
    for part, role in (("inputs", "read"), ("outputs", "written")):
        for path, entry in manifest[part].items():
            identifier = entity_id(path, root)
            properties = {"name": path, "sha256": entry.get("sha256")}
            if path == snakefile:
                properties["@type"] = ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"]
            name = PurePosixPath(path)
            media = MEDIA_TYPES.get(name.suffix.lower()) or ("text/x-snakemake" if name.name == "Snakefile" else None)
            if media:
                properties["encodingFormat"] = media
            if role == "written":
                properties["description"] = f"written by rule {entry.get('rule') or '?'}"
            else:
                properties["description"] = f"read by {', '.join(entry.get('read_by') or ['?'])}"
            if identifier.startswith("file://"):
                entity = DataEntity(crate, identifier, properties={"@type": "File", **properties})
            else:
                entity = File(crate, dest_path=identifier, properties=properties)
            files[path] = crate.add(entity)

    # the root: the article's metadata, the profiles, the workflow
    meta = metadata
    root_entity = crate.root_dataset
    root_entity["name"] = meta.title if meta else "An articlekit build"
    root_entity["description"] = (
        (meta.description if meta else "")
        or "The build of an article whose every number is regenerated: every file it read and wrote, each job "
        "that wrote one, and every value the article prints."
    )
    root_entity["datePublished"] = now()
    # RO-Crate requires a licence; where the article states none, the crate
    # says so in words (which RO-Crate allows) rather than invent one
    root_entity["license"] = spdx_url(meta.license) if meta and meta.license else NO_LICENSE
    if meta and meta.authors:
        people = [
            add(
                f"https://orcid.org/{author.orcid}" if author.orcid else f"#author-{n}",
                "Person",
                name=author.name,
                **({"affiliation": author.affiliation} if author.affiliation else {}),
            )
            for n, author in enumerate(meta.authors, 1)
        ]
        root_entity["author"] = one_or_many([ref(p) for p in people])
    if meta and meta.version:
        root_entity["version"] = meta.version
    profiles = [add(uri, "CreativeWork", name=name, version=version) for uri, (name, version) in PROFILES.items()]
    root_entity["conformsTo"] = [ref(p) for p in profiles]

    language = add(
        SNAKEMAKE_LANGUAGE["@id"],
        "ComputerLanguage",
        name="Snakemake",
        url={"@id": "https://snakemake.readthedocs.io"},
        version=software.get("snakemake", ""),
    )
    if snakefile:
        workflow = files[snakefile]
    else:  # a build whose Snakefile is not among what it read (a test's): the workflow by name alone
        workflow = add("#workflow", ["SoftwareSourceCode", "ComputationalWorkflow", "HowTo"])
    workflow["programmingLanguage"] = ref(language)
    root_entity["mainEntity"] = ref(workflow)

    engine = add(
        "#snakemake",
        "SoftwareApplication",
        name="Snakemake",
        softwareVersion=software.get("snakemake", ""),
        url={"@id": "https://snakemake.readthedocs.io"},
    )
    articlekit = add(
        "#articlekit", "SoftwareApplication", name="articlekit", softwareVersion=software.get("articlekit", "")
    )

    # one tool and one step per rule; one action per job
    jobs = jobs_of(ledger, list(manifest["outputs"]))
    rules = sorted({rule for rule, *_ in jobs})
    tools, steps = {}, {}
    for position, rule in enumerate(rules):
        tools[rule] = add(f"#rule-{slug(rule)}", "SoftwareApplication", name=f"rule {rule}")
        steps[rule] = add(
            f"#step-{slug(rule)}",
            "HowToStep",
            name=f"rule {rule}",
            position=str(position),
            workExample=ref(tools[rule]),
        )
    workflow["hasPart"] = [ref(t) for t in tools.values()]
    workflow["step"] = [ref(s) for s in steps.values()]

    libraries = {}

    def library(name, version):
        identifier = f"#software-{slug(name)}-{slug(version)}"
        if identifier not in libraries:
            libraries[identifier] = add(identifier, "SoftwareApplication", name=name, softwareVersion=str(version))
        return libraries[identifier]

    actions, controls, made_by = [], [], {}
    for n, (rule, started, finished, written, read) in enumerate(jobs, 1):
        record = next((r for r in map(artifact_record, written) if r), {})
        instruments = [ref(tools[rule]), ref(articlekit)]
        instruments += [ref(library(name, version)) for name, version in sorted((record.get("versions") or {}).items())]
        params = [
            add(
                f"#param-{slug(rule)}-{n}-{slug(name)}",
                "PropertyValue",
                name=name,
                value=json.dumps(value) if not isinstance(value, str) else value,
            )
            for name, value in sorted((record.get("params") or {}).items())
        ]
        objects = [ref(files[p]) for p in read if p in files] + [ref(p) for p in params]
        experiment = f" (experiment {record['experiment']})" if record.get("experiment") else ""
        action = add(
            f"#job-{n}-{slug(rule)}",
            "CreateAction",
            name=f"rule {rule}{experiment}",
            description=f"Snakemake's job of rule {rule}{experiment}: it read {len(read)} files and wrote "
            f"{', '.join(written)}",
            instrument=one_or_many(instruments),
            object=one_or_many(objects),
            result=one_or_many([ref(files[p]) for p in written]),
            actionStatus={"@id": "http://schema.org/CompletedActionStatus"},
        )
        if started:
            action["startTime"] = started
        if finished:
            action["endTime"] = finished
        for path in written:
            made_by[path] = action
        actions.append(action)
        controls.append(
            add(
                f"#control-{n}-{slug(rule)}",
                "ControlAction",
                name=f"orchestrate rule {rule}",
                instrument=ref(steps[rule]),
                object=ref(action),
            )
        )

    run = add(
        "#build",
        "CreateAction",
        name=f"the build of {root_entity['name']}",
        instrument=ref(workflow),
        object=[ref(files[p]) for p in manifest["inputs"]],
        result=[ref(files[p]) for p in manifest["outputs"]],
        actionStatus={"@id": "http://schema.org/CompletedActionStatus"},
        endTime=now(),
    )
    if ledger.run.get("started"):
        run["startTime"] = ledger.run["started"]
    add(
        "#organize",
        "OrganizeAction",
        name="Snakemake ran the workflow",
        instrument=ref(engine),
        result=ref(run),
        object=[ref(c) for c in controls],
    )

    # every bound value, linked to its artifact and the job that wrote it
    for entity, artifact in value_entities(bindings or {}, add, files):
        if artifact in made_by:
            job = made_by[artifact]
            job["result"] = [*map(ref, listed(job.get("result"))), ref(entity)]
    root_entity["hasPart"] = [ref(f) for f in files.values()]
    root_entity["mentions"] = [ref(run), *map(ref, actions)]
    return crate


def one_or_many(references):
    """A list of one as its one item: RO-Crate 1.1's JSON-LD form."""
    return references[0] if len(references) == 1 else references


def listed(value):
    return value if isinstance(value, list) else [] if value is None else [value]


def value_entities(bindings, add, files):
    """[(PropertyValue, the artifact's path)], one per bound value (per key
    and format), in the bindings' order."""
    seen = set()
    made = []
    for binding in (bindings.get("bindings") or {}).values():
        key, anchor = binding.get("key"), binding.get("anchor") or slug(binding.get("key"))
        identifier = f"#value-{anchor}"
        while identifier in seen:
            identifier += "-again"
        seen.add(identifier)
        properties = {
            "name": key,
            "propertyID": key,
            "value": binding.get("text", ""),
            "url": f"article.html#{anchor}",
        }
        if binding.get("fmt"):
            properties["description"] = f"printed with format {binding['fmt']}"
        claim = binding.get("claim")
        if claim:
            properties["description"] = f"{properties.get('description', 'printed')}; claim: {claim_text(claim)}"
        source = binding.get("source") or {}
        artifact = source.get("artifact")
        if artifact and artifact in files:
            properties["isBasedOn"] = {"@id": files[artifact].id}
        article = (binding.get("locations") or [""])[0].rsplit(":", 1)[0]
        if article in files:
            properties["subjectOf"] = {"@id": files[article].id}
        made.append((add(identifier, "PropertyValue", **properties), artifact))
    return made


def claim_text(claim):
    """A claim as a sentence: what it asserts and the verdict the build gave."""
    if isinstance(claim, str):
        return claim
    asserted, verdict = claim.get("expect") or "", claim.get("status") or ""
    return f"{asserted} ({verdict})" if verdict else str(asserted)


def crate_json(crate):
    """The crate's metadata file's text (no data file is copied anywhere)."""
    return json.dumps(crate.metadata.generate(), indent=2, ensure_ascii=False) + "\n"


# --- reading it back -----------------------------------------------------------


def files_view(document, root="build"):
    """The manifest's view of a crate document: {"outputs": {PATH: {sha256,
    rule}}, "inputs": {PATH: {sha256, read_by}}}, read from its structure:
    the build's action names the files, each job's action its rule (its
    tool) and what it read and wrote; a file the build read that no job
    read is the plan's. CrateError when it is no crate this module wrote."""
    graph = document.get("@graph") if isinstance(document, dict) else None
    if not isinstance(graph, list):
        raise CrateError("no @graph: not an RO-Crate")
    by_id = {e.get("@id"): e for e in graph if isinstance(e, dict)}
    run = by_id.get("#build")
    if not run:
        raise CrateError("no #build action: not the crate of an articlekit build")

    def ids(value):
        value = value if isinstance(value, list) else [value] if value else []
        return [v["@id"] for v in value if isinstance(v, dict) and "@id" in v]

    rule_of, readers = {}, defaultdict(set)
    for identifier, entity in by_id.items():
        if not str(identifier).startswith("#job-"):
            continue
        tool = next((by_id.get(t) for t in ids(entity.get("instrument")) if str(t).startswith("#rule-")), None)
        rule = (tool or {}).get("name", "rule ?").removeprefix("rule ")
        for written in ids(entity.get("result")):
            rule_of[written] = rule
        for read in ids(entity.get("object")):
            readers[read].add(rule)
    outputs = {
        path_of(i, root): {"sha256": by_id.get(i, {}).get("sha256"), "rule": rule_of.get(i, "?")}
        for i in ids(run.get("result"))
    }
    inputs = {
        path_of(i, root): {"sha256": by_id.get(i, {}).get("sha256"), "read_by": sorted(readers[i]) or ["the plan"]}
        for i in ids(run.get("object"))
    }
    return {"outputs": outputs, "inputs": inputs}
