"""roc-validator, run offline: the build's crate judged against the profile
it declares.

roc-validator fetches the crate's JSON-LD context (RO-Crate 1.1's URL) over
HTTP, and rdflib fetches it again to read the crate as RDF. CI has no
internet: both are handed the context from tests/crate/ (a copy of the one
that URL serves) and any other URL is left to fail as it would. Nothing of
the validator's judgement is changed.
"""

import json
from pathlib import Path

CONTEXT_URL = "https://w3id.org/ro/crate/1.1/context"
CONTEXT = Path(__file__).parent / "crate" / "ro-crate-1.1-context.jsonld"
PROFILES = {  # a profile's URI -> roc-validator's identifier of it
    "https://w3id.org/ro/wfrun/provenance/0.5": "provenance-run-crate-0.5",
    "https://w3id.org/ro/wfrun/workflow/0.5": "workflow-run-crate-0.5",
    "https://w3id.org/ro/wfrun/process/0.5": "process-run-crate-0.5",
}


def _context():
    return {"@context": json.loads(CONTEXT.read_text(encoding="utf-8"))["@context"]}


def _serve_the_context_locally(monkeypatch):
    import requests
    import rdflib.plugins.shared.jsonld.context as jsonld_context
    from rocrate_validator.utils.http import HttpRequester

    fetch = jsonld_context.source_to_json

    def source_to_json(source, *args, **kwargs):
        if isinstance(source, str) and source.rstrip("/") == CONTEXT_URL:
            return _context(), None
        return fetch(source, *args, **kwargs)

    def get(self, url, *args, **kwargs):
        if url.rstrip("/") == CONTEXT_URL:
            response = requests.models.Response()
            response.status_code, response.url, response.encoding = 200, url, "utf-8"
            response._content = json.dumps(_context()).encode("utf-8")
            response.headers["Content-Type"] = "application/ld+json"
            return response
        return HttpRequester.__getattr__(self, "get")(url, *args, **kwargs)

    monkeypatch.setattr(jsonld_context, "source_to_json", source_to_json)
    monkeypatch.setattr(HttpRequester, "get", get, raising=False)


def validation_issues(crate_folder, profile, monkeypatch, severity="REQUIRED", cache=None):
    """[(check, message)] roc-validator finds in the crate at crate_folder
    for `profile` (its identifier) at `severity` and above: [] when it
    conforms."""
    from rocrate_validator import services

    _serve_the_context_locally(monkeypatch)
    result = services.validate(
        {
            "rocrate_uri": str(crate_folder),
            "profile_identifier": profile,
            "requirement_severity": severity,
            "offline": True,
            "cache_path": str(cache) if cache else None,
            "skip_availability_check": True,
        }
    )
    issues = [(issue.check.identifier, issue.message) for issue in result.get_issues()]
    assert result.passed() == (not issues), issues
    return issues


def declared_profile(crate_folder):
    """roc-validator's identifier of the strictest Workflow Run profile the
    crate's root declares."""
    graph = json.loads((Path(crate_folder) / "ro-crate-metadata.json").read_text(encoding="utf-8"))["@graph"]
    root = next(e for e in graph if e.get("@id") == "./")
    declared = [c["@id"] for c in root.get("conformsTo", [])]
    return next(PROFILES[uri] for uri in PROFILES if uri in declared)
