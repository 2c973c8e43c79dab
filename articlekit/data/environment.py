"""The environment record: where and with what a build ran, read in one place.

An article's `environment` experiment writes it, so its values sit under
`environment.` in build/values.json: one entry per library version (named as
in publishing.libraries) and whatever else the article records about the
machine and the run. Which of its fields are what is the article's to say:
publishing.machine names the keys that change floating-point results,
publishing.per_build those every build records differently (a date, a job
id), publishing.built_at the one that says when the build ran. Any
experiment may also say where it ran (publishing.where_run, e.g. a host
name): reported with the environment, never compared.
"""

PREFIX = "environment."


def is_environment(key, publishing):
    """A key that says where or on what the build ran, not what it computed."""
    return key.startswith(PREFIX) or publishing.is_where_run(key)


def field_name(key):
    """'environment.cpu' -> 'cpu'; another key as it is."""
    return key[len(PREFIX) :] if key.startswith(PREFIX) else key


def record(values):
    """The environment.* values without the prefix (what a release's README reports)."""
    return {field_name(k): v for k, v in values.items() if k.startswith(PREFIX)}


def built_at(values, publishing):
    """When the build ran, as the key publishing.built_at names records it (None without one)."""
    return values.get(publishing.built_at) if publishing.built_at else None


def recorded_versions(doc, publishing):
    """{library: version or None}: Python, then each other library the
    article records (publishing.libraries), as the environment record of
    `doc` (a values document or a snapshot) has it, else as its experiments
    recorded it (an article without an environment experiment: a new one)."""
    values, recorded = doc.get("values", {}), installed_versions(doc)
    libraries = dict.fromkeys(["python", *publishing.libraries])
    return {
        lib: values.get(PREFIX + lib) if isinstance(values.get(PREFIX + lib), str) else recorded.get(lib)
        for lib in libraries
    }


def installed_versions(values_doc):
    """The library versions of this build: every version an experiment
    recorded, the environment record's own where it has one."""
    values = values_doc.get("values", {})
    found = {}
    for experiment_versions in values_doc.get("versions", {}).values():
        found.update(experiment_versions)
    for library in found:
        if isinstance(values.get(PREFIX + library), str):
            found[library] = values[PREFIX + library]
    return found


def machine_change(old_values, new_values, publishing):
    """[{what, release, build}] for each machine key (publishing.machine) that
    differs; one a side did not record is unknown, not a change."""
    out = []
    for key in publishing.machine:
        before, after = old_values.get(key), new_values.get(key)
        if before is not None and after is not None and before != after:
            out.append({"what": field_name(key), "release": before, "build": after})
    return out


def in_record(key):
    """A value of the environment record itself (not a run place recorded elsewhere)."""
    return key.startswith(PREFIX)
