"""The environment record: where and with what a build ran, read in one place.

An article's `environment` experiment writes it, so its values sit under
`environment.` in build/values.json: one entry per library version (named as
in publishing.libraries), the machine (publishing.machine names the keys that
change floating-point results), and provenance fields every build records
differently (PER_BUILD). Any experiment may also say where it ran
(`.hostname`, `.executor`): reported with the environment, never compared.
"""

import re

PREFIX = "environment."
# Differ on every build by design: shown in a header, never as a change.
PER_BUILD = ("build_date", "build_time_utc", "slurm_job_id")
BUILT_AT = "build_time_utc"
# Where a run happened, recorded under any experiment.
_RUN_PLACE = re.compile(r"\.(hostname|executor)$")


def is_environment(key):
    """A key that says where or on what the build ran, not what it computed."""
    return key.startswith(PREFIX) or bool(_RUN_PLACE.search(key))


def is_per_build(key):
    return key in {PREFIX + name for name in PER_BUILD}


def field_name(key):
    """'environment.cpu_model' -> 'cpu_model'; another key as it is."""
    return key[len(PREFIX):] if key.startswith(PREFIX) else key


def record(values):
    """The environment.* values without the prefix (what a release's README reports)."""
    return {field_name(k): v for k, v in values.items() if k.startswith(PREFIX)}


def built_at(values):
    return values.get(PREFIX + BUILT_AT)


def recorded_versions(values, publishing):
    """{library: version or None} for each library the article records, as
    the environment record has them."""
    return {lib: values.get(PREFIX + lib) for lib in publishing.libraries}


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
