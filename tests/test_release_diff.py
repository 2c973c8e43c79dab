"""Releases and the diff: freeze a build, change something, and the diff
says exactly what changed beyond its agreement rule, old beside new.

The build is the audit fixture (tests/fixtures/audit/); each test changes
one thing in a copy of it.
"""

import copy
import functools
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from articlekit.review import diff as diff_module
from articlekit.review import release as release_module
from articlekit.data.baseline import load_baseline
from articlekit.core.jsonio import read_json, write_json
from articlekit.data.publishing import Publishing
from articlekit.data.publishing import parse as parse_publishing
from articlekit.review.snapshot import SnapshotError, latest_snapshot, load_snapshot
from articlekit.review.snapshot_digest import sealed

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
ROOT = Path(__file__).resolve().parent.parent
# The fixture is a build of this article: its publishing section says which
# libraries it records, which keys are volatile and which name the machine.
ARTICLE = parse_publishing(yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))["publishing"])
compare = functools.partial(diff_module.compare, publishing=ARTICLE)
to_markdown = functools.partial(diff_module.to_markdown, publishing=ARTICLE)
release = functools.partial(release_module.release, publishing=ARTICLE)
CHANGE_COUNTS = (
    "numbers_changed",
    "texts_changed",
    "printed_changed",
    "claims_changed",
    "environment_changed",
    "keys_added",
    "keys_removed",
)


@pytest.fixture
def build():
    return {
        "values": read_json(FIXTURES / "values.json"),
        "bindings": read_json(FIXTURES / "bindings.json"),
        "audit": {"summary": {"reproduced": 1}, "entries": [{"id": "x", "status": "reproduced"}]},
    }


@pytest.fixture
def baseline():
    return load_baseline(FIXTURES / "baseline.yaml")


def released(build, tmp_path, label="numpy-2.5.4_torch-2.13.0", **kwargs):
    path = release(label, build["values"], build["bindings"], build["audit"], tmp_path / "releases", **kwargs)
    return load_snapshot(path)


def changes(diff):
    return {k: diff["summary"][k] for k in CHANGE_COUNTS if diff["summary"][k]}


# ---- release -------------------------------------------------------------------


def test_a_release_freezes_values_bound_texts_claims_and_versions(build, tmp_path):
    snapshot = released(build, tmp_path)
    assert snapshot["label"] == "numpy-2.5.4_torch-2.13.0"
    assert datetime.fromisoformat(snapshot["released_at"]).utcoffset().total_seconds() == 0
    assert snapshot["values"]["parity.sdpa.max_abs_diff"] == 4.440892098500626e-16
    assert snapshot["bindings"]["parity.mha.max_abs_diff|.2e|< 1e-12"]["text"] == "1.00e-03"
    assert [c["holds"] for c in snapshot["claims"]] == [True, False, True]
    assert snapshot["environment"]["torch"] == "2.13.0+cpu"
    assert snapshot["versions"]["parity"]["torch"] == "2.13.0+cpu"
    readme = (tmp_path / "releases/numpy-2.5.4_torch-2.13.0/README.md").read_text()
    assert "PyTorch 2.13.0+cpu" in readme


def test_a_release_label_is_never_overwritten_without_force(build, tmp_path):
    first = released(build, tmp_path)
    with pytest.raises(FileExistsError) as refused:
        released(build, tmp_path)
    # `snakemake release` cannot pass --label or --force: say what works through it
    assert "snakemake release --config release_label=NEW_LABEL" in str(refused.value)
    assert "git rm -r" in str(refused.value) and "--force" in str(refused.value)
    later = datetime(2099, 1, 1, tzinfo=timezone.utc)
    again = released(build, tmp_path, force=True, now=later)
    assert again["released_at"] != first["released_at"]


def test_a_label_that_cannot_be_a_folder_name_is_refused(build, tmp_path):
    with pytest.raises(ValueError, match="label"):
        released(build, tmp_path, label="../elsewhere")


def test_the_latest_snapshot_is_chosen_by_released_at_not_by_name(build, tmp_path):
    release(
        "z-old",
        build["values"],
        build["bindings"],
        build["audit"],
        tmp_path,
        now=datetime(2026, 1, 1, tzinfo=timezone.utc),
    )
    release(
        "a-new",
        build["values"],
        build["bindings"],
        build["audit"],
        tmp_path,
        now=datetime(2026, 6, 1, tzinfo=timezone.utc),
    )
    assert latest_snapshot(tmp_path) == tmp_path / "a-new/snapshot.json"
    assert latest_snapshot(tmp_path / "none-yet") is None


def test_two_snapshots_released_at_the_same_time_are_an_error_naming_both(build, tmp_path):
    """Picking one by name would diff against the wrong release, silently."""
    same = datetime(2026, 6, 1, tzinfo=timezone.utc)
    for label in ("first", "second"):
        release(label, build["values"], build["bindings"], build["audit"], tmp_path, now=same)
    with pytest.raises(SnapshotError) as caught:
        latest_snapshot(tmp_path)
    assert "first/snapshot.json" in str(caught.value) and "second/snapshot.json" in str(caught.value)
    assert "2026-06-01T00:00:00+00:00" in str(caught.value)
    # an older tie does not matter: the newest release is unambiguous
    release(
        "newest",
        build["values"],
        build["bindings"],
        build["audit"],
        tmp_path,
        now=datetime(2026, 7, 1, tzinfo=timezone.utc),
    )
    assert latest_snapshot(tmp_path) == tmp_path / "newest/snapshot.json"


# ---- diff --------------------------------------------------------------------------


def test_the_same_build_against_its_own_release_changes_nothing(build, baseline, tmp_path):
    diff = compare(released(build, tmp_path), build["values"], build["bindings"], baseline)
    assert changes(diff) == {}
    assert diff["summary"]["moved_within_rule"] == 0
    assert "Nothing changed beyond its agreement rule." in to_markdown(diff)


def test_a_changed_exact_value_shows_old_beside_new(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    build["values"]["values"]["scaling.dk64.dot_std"] = 7.5
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    assert changes(diff) == {"numbers_changed": 1}
    (row,) = diff["numbers"]
    assert (row["key"], row["release"], row["build"]) == ("scaling.dk64.dot_std", 7.4, 7.5)
    assert (
        "| `scaling.dk64.dot_std` | exact at the printed precision (.2f) | `7.4` | `7.5` | "
        "printed 7.40 then, 7.50 now |"
    ) in to_markdown(diff)


def test_an_exact_value_is_judged_at_the_precision_the_edition_printed(build, baseline, tmp_path):
    """The seeded table: a last-bit move that prints the same digits is not a change."""
    snapshot = released(build, tmp_path)
    build["values"]["values"]["scaling.dk64.dot_std"] = 7.4 + 2e-15
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    assert changes(diff) == {}
    (row,) = diff["within_rule"]
    assert row["why"] == "equal at the printed precision (.2f: 7.40)"


def on_another_cpu(values, capability="AVX2"):
    values["environment.torch_cpu_capability"] = capability


def test_last_bit_differences_on_another_cpu_are_machine_noise(build, tmp_path):
    """A release made with AVX-512 kernels, rebuilt with AVX2: the weights
    differ in their last bits. Not a change; the diff says why."""
    values = build["values"]["values"]
    on_another_cpu(values, "AVX512")
    values["example.weights"] = [[0.3538258083350559, 0.0538802652029713]]
    values["parity.cross.sdpa_max_abs_diff"] = 3.3306690738754696e-16
    snapshot = released(build, tmp_path)
    on_another_cpu(values, "AVX2")
    values["example.weights"] = [[0.3538258083350559, 0.05388026520297132]]
    # an error measure (a max |diff| of values near 1) moves by a few ULPs of 1.0
    values["parity.cross.sdpa_max_abs_diff"] = 4.440892098500626e-16
    diff = compare(snapshot, build["values"], build["bindings"], baseline=None)
    assert diff["numbers"] == []
    assert diff["machine"] == [{"what": "torch_cpu_capability", "release": "AVX512", "build": "AVX2"}]
    within = {r["key"]: r["why"] for r in diff["within_rule"]}
    assert within["example.weights"].startswith("within ") and "(float64), tolerance 16" in within["example.weights"]
    assert "ULP of 1.0 (float64; an error measure)" in within["parity.cross.sdpa_max_abs_diff"]
    assert "machine noise: torch_cpu_capability AVX512 → AVX2" in within["example.weights"]
    md = to_markdown(diff)
    assert "**The machine changed** (torch_cpu_capability `AVX512` → `AVX2`)" in md


def test_beyond_the_ulp_tolerance_is_a_change_even_on_another_cpu(build, tmp_path):
    values = build["values"]["values"]
    values["example.weights"] = [[0.2, 0.2]]
    snapshot = released(build, tmp_path)
    on_another_cpu(values)
    values["example.weights"] = [[0.2, 0.2 + 1e-12]]  # thousands of ULPs: the code or a library moved it
    diff = compare(snapshot, build["values"], build["bindings"], baseline=None)
    (row,) = diff["numbers"]
    assert row["key"] == "example.weights" and "beyond the tolerance of 16" in row["why"]


def test_on_the_same_machine_the_diff_says_so(build, baseline, tmp_path):
    diff = compare(released(build, tmp_path), build["values"], build["bindings"], baseline)
    assert diff["machine"] == []
    assert "Same machine as the release (cpu_model, cpu_id, torch_cpu_capability, blas)" in to_markdown(diff)


# ---- an article that configures nothing --------------------------------------------


def test_without_a_publishing_section_nothing_is_volatile_and_no_machine_is_named(build, tmp_path):
    """articlekit knows no article: with the neutral defaults a timing is an
    ordinary float, no key says what machine ran the build, and only Python
    is a recorded library."""
    snapshot = released(build, tmp_path)
    values = build["values"]["values"]
    values["timing.main.loop.median_ms"] *= 1.2  # inside any band, far beyond 16 ULPs
    on_another_cpu(values)
    diff = diff_module.compare(snapshot, build["values"], build["bindings"], baseline=None)
    assert [r["key"] for r in diff["numbers"]] == ["timing.main.loop.median_ms"]
    assert diff["machine"] == []
    assert diff["build"]["versions"] == {"python": values["environment.python"]}
    md = diff_module.to_markdown(diff, Publishing())
    assert "Same machine" not in md and "The machine changed" not in md
    assert f"Python {values['environment.python']}; no other library declared (publishing.libraries)." in md
    assert "NumPy" not in md


# ---- the article's publishing settings reach the diff ----------------------------------
# Each setting changes how a key that moved is judged; without it the key
# follows the plain rule. The keys are made up: no rule may hang on this
# article's key names.

F32_TENTH = 0.10000000149011612  # 0.1 as float32 holds it
F32_TENTH_3_ULPS_UP = F32_TENTH + 3 * 2.0**-27  # three float32 ULPs of 0.1 up


def where_it_went(diff, key):
    """Which part of the diff lists `key`."""
    for part in ("numbers", "texts", "within_rule"):
        if key in [r["key"] for r in diff[part]]:
            return part
    if key in diff["not_compared"]:
        return "not_compared"
    if key in [e["what"] for e in diff["environment"]] or key.split(".", 1)[-1] in [
        e["what"] for e in diff["environment"]
    ]:
        return "environment"
    return "not listed"


@pytest.mark.parametrize(
    "setting, patterns, key, old, new, declared, plain",
    [
        # a max |diff| near one: a few ULPs of 1.0, millions of ULPs of itself
        (
            "error_measures",
            ["*.gap"],
            "fit.gap",
            3.3306690738754696e-16,
            4.440892098500626e-16,
            "within_rule",
            "numbers",
        ),
        # computed in float32: three float32 ULPs, millions of float64 ones
        ("single_precision", ["fit.f32.*"], "fit.f32.tenth", F32_TENTH, F32_TENTH_3_ULPS_UP, "within_rule", "numbers"),
        # how a measurement scattered: reported, never compared
        ("spread", ["bench.*.q1"], "bench.run.q1", 1.0, 50.0, "not_compared", "numbers"),
        # differs on every build: not even listed
        ("per_build", ["environment.job"], "environment.job", "17", "18", "not listed", "environment"),
        # where an experiment ran: listed with the environment, not as a text
        ("where_run", ["*.host"], "bench.host", "laptop", "node-7", "environment", "texts"),
    ],
)
def test_a_publishing_setting_changes_how_the_diff_judges_a_key(
    build, tmp_path, setting, patterns, key, old, new, declared, plain
):
    values = build["values"]["values"]
    values[key] = old
    snapshot = released(build, tmp_path)
    values[key] = new
    judged = {
        name: diff_module.compare(snapshot, build["values"], build["bindings"], publishing=publishing)
        for name, publishing in (("declared", parse_publishing({setting: patterns})), ("plain", Publishing()))
    }
    assert (where_it_went(judged["declared"], key), where_it_went(judged["plain"], key)) == (declared, plain)


def test_an_error_measure_says_its_ulps_are_of_one(build, tmp_path):
    values = build["values"]["values"]
    values["fit.gap"] = 3.3306690738754696e-16
    snapshot = released(build, tmp_path)
    values["fit.gap"] = 4.440892098500626e-16
    diff = diff_module.compare(
        snapshot,
        build["values"],
        build["bindings"],
        publishing=parse_publishing({"error_measures": ["*.gap"], "single_precision": ["*.gap"]}),
    )
    (row,) = [r for r in diff["within_rule"] if r["key"] == "fit.gap"]
    assert row["why"].startswith("within ") and "ULP of 1.0 (float32; an error measure), tolerance 16" in row["why"]


def test_the_build_time_in_the_header_is_the_key_built_at_names(build, tmp_path):
    values = build["values"]["values"]
    values["environment.when"] = "2026-12-01T09:00:00+00:00"
    snapshot = released(build, tmp_path)
    named = diff_module.compare(
        snapshot, build["values"], build["bindings"], publishing=parse_publishing({"built_at": "environment.when"})
    )
    assert named["build"]["built_at"] == "2026-12-01T09:00:00+00:00"
    assert "This build of 2026-12-01T09:00:00+00:00:" in diff_module.to_markdown(named, Publishing())
    unnamed = diff_module.compare(snapshot, build["values"], build["bindings"], publishing=Publishing())
    assert unnamed["build"]["built_at"] is None and "\nThis build: " in diff_module.to_markdown(unnamed, Publishing())


@pytest.mark.workflow
def test_the_setting_travels_to_the_diff_command_as_its_publishing_argument(tmp_path):
    """What the module's rules hand over (--publishing JSON) is what the command judges by."""
    values_doc = read_json(FIXTURES / "values.json")
    values_doc["values"]["fit.gap"] = 3.3306690738754696e-16
    write_json(tmp_path / "then.json", values_doc)
    write_json(tmp_path / "audit.json", {"summary": {}, "entries": []})
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "release",
            "--label",
            "v1",
            "--values",
            tmp_path / "then.json",
            "--bindings",
            FIXTURES / "bindings.json",
            "--audit",
            tmp_path / "audit.json",
            "--releases",
            tmp_path / "releases",
        ],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    values_doc["values"]["fit.gap"] = 4.440892098500626e-16
    write_json(tmp_path / "now.json", values_doc)

    def diffed(*publishing):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "articlekit",
                "diff",
                "--values",
                tmp_path / "now.json",
                "--bindings",
                FIXTURES / "bindings.json",
                *publishing,
                "--json",
                tmp_path / "diff.json",
                "--md",
                tmp_path / "diff.md",
                tmp_path / "releases/v1/snapshot.json",
            ],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return read_json(tmp_path / "diff.json")

    assert where_it_went(diffed("--publishing", json.dumps({"error_measures": ["*.gap"]})), "fit.gap") == "within_rule"
    assert where_it_went(diffed(), "fit.gap") == "numbers"


def test_another_blas_kernel_is_another_machine(build, tmp_path):
    """The environment record names the kernel OpenBLAS picked (another kernel
    sums in another order): a machine key of the article, so the diff says why
    last bits moved."""
    values = build["values"]["values"]
    blas = "scipy-openblas 0.3.31 (OpenBLAS 0.3.31 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64)"
    values["environment.blas"] = f"{blas}, running its SkylakeX kernel"
    snapshot = released(build, tmp_path)
    values["environment.blas"] = f"{blas}, running its Haswell kernel"
    diff = compare(snapshot, build["values"], build["bindings"], baseline=None)
    assert [m["what"] for m in diff["machine"]] == ["blas"]
    assert "**The machine changed** (blas" in to_markdown(diff)


def test_a_releases_readme_names_the_machine_by_the_articles_machine_keys(build, tmp_path):
    values = build["values"]["values"]
    values.update(
        {
            "environment.cpu_model": "AMD EPYC",
            "environment.cpu_id": "AuthenticAMD family 25 model 1",
            "environment.torch_cpu_capability": "AVX512",
            "environment.blas": "scipy-openblas 0.3.31, running its SkylakeX kernel",
        }
    )
    snapshot = released(build, tmp_path)
    readme = (tmp_path / "releases" / snapshot["label"] / "README.md").read_text(encoding="utf-8")
    assert (
        "- Machine: cpu_model AMD EPYC; cpu_id AuthenticAMD family 25 model 1; torch_cpu_capability AVX512; "
        "blas scipy-openblas 0.3.31, running its SkylakeX kernel\n"
    ) in readme
    plain = release_module.readme_of(snapshot, Publishing())
    assert "Machine" not in plain and "cpu_model" not in plain
    named = release_module.readme_of(snapshot, parse_publishing({"machine": ["environment.gpu"]}))
    assert "- Machine: gpu ?\n" in named  # a key the build did not record


@pytest.mark.parametrize(
    "old, new",
    [
        (5, 6),  # a count
        ([5, 16], [5, 17]),  # a shape
        ([1, 2], [1, 2, 3]),  # a length
        (True, False),
        ("ValueError", "TypeError"),
        (3, 3.0000000000000004),  # an integer is exact, never "within ULPs"
    ],
)
def test_what_is_exact_stays_exact(build, tmp_path, old, new):
    build["values"]["values"]["multihead.some_exact_value"] = old
    snapshot = released(build, tmp_path)
    build["values"]["values"]["multihead.some_exact_value"] = new
    diff = compare(snapshot, build["values"], build["bindings"], baseline=None)
    assert "multihead.some_exact_value" in [r["key"] for r in diff["numbers"] + diff["texts"]]


def test_diff_markdown_escapes_html_in_plain_text(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    build["values"]["values"]["environment.build_time_utc"] = "<script>alert(1)</script>"
    build["values"]["values"]["errors.torch_no_transpose.message"] = "<b>new</b>"
    md = to_markdown(compare(snapshot, build["values"], build["bindings"], baseline))
    assert "&lt;script&gt;" in md and "<script>" not in md
    assert "`<b>new</b>`" in md  # in a code span Markdown shows it as text


def test_a_noise_value_moving_within_its_bound_is_not_a_change(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    build["values"]["values"]["parity.sdpa.max_abs_diff"] = 2.220446049250313e-16
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    assert changes(diff) == {}
    assert [r["key"] for r in diff["within_rule"]] == ["parity.sdpa.max_abs_diff"]


def test_a_noise_value_breaking_its_bound_is_a_change(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    build["values"]["values"]["parity.sdpa.max_abs_diff"] = 1e-3
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    assert [r["key"] for r in diff["numbers"]] == ["parity.sdpa.max_abs_diff"]
    assert "breaks '< 1e-12'" in diff["numbers"][0]["why"]


def test_a_changed_number_says_what_the_article_claims_about_it(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    build["values"]["values"]["parity.mha.max_abs_diff"] = 2e-3
    (row,) = compare(snapshot, build["values"], build["bindings"], baseline)["numbers"]
    assert row["why"].endswith("the article claims < 1e-12: fails")


def test_without_a_baseline_entry_timings_move_within_a_band_and_the_rest_must_be_equal(build, tmp_path):
    values = build["values"]["values"]
    values["timing.sweep.loop.median_ms"] = [1.0, 4.0, None]  # null: not measured at that T
    values["example.weights"] = [[0.2, 0.2, 0.2, 0.2, 0.2]]
    snapshot = released(build, tmp_path)
    values["timing.sweep.loop.median_ms"] = [1.5, 3.0, None]  # within [0.5, 2]
    values["example.weights"] = [[0.2, 0.2, 0.2, 0.2, 0.21]]
    diff = compare(snapshot, build["values"], build["bindings"], baseline=None)
    assert [r["key"] for r in diff["numbers"]] == ["example.weights"]
    assert [r["key"] for r in diff["within_rule"]] == ["timing.sweep.loop.median_ms"]

    values["timing.sweep.loop.median_ms"] = [1.0, 12.0, None]  # 3x
    diff = compare(snapshot, build["values"], build["bindings"], baseline=None)
    (row,) = [r for r in diff["numbers"] if r["key"] == "timing.sweep.loop.median_ms"]
    assert row["why"].startswith("item 2 of 3, 4 to 12: 3.00x")

    values["timing.sweep.loop.median_ms"] = [1.0, 4.0, 9.0]  # measured where it was not
    diff = compare(snapshot, build["values"], build["bindings"], baseline=None)
    assert "timing.sweep.loop.median_ms" in [r["key"] for r in diff["numbers"]]


def test_the_spread_of_a_timing_is_reported_not_compared(build, tmp_path):
    build["values"]["values"]["timing.main.torch.samples_ms"] = [0.3, 0.3, 60.0]
    snapshot = released(build, tmp_path)
    build["values"]["values"]["timing.main.torch.samples_ms"] = [0.3, 0.3, 0.3]
    diff = compare(snapshot, build["values"], build["bindings"], baseline=None)
    assert changes(diff) == {}
    assert diff["not_compared"] == ["timing.main.torch.samples_ms"]
    assert "Reported, not compared" in to_markdown(diff)


def test_a_changed_error_message_shows_as_a_text(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    key = "errors.torch_no_transpose.message"
    build["values"]["values"][key] = "mat1 and mat2 must have compatible shapes (5x4 and 5x4)"
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    assert changes(diff) == {"texts_changed": 1}
    assert diff["texts"][0]["build"].startswith("mat1 and mat2 must have")
    assert "must have compatible shapes" in to_markdown(diff)


def test_a_claim_whose_result_changed_shows(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    binding = build["bindings"]["bindings"]["scaling.dk64.unscaled.max_weight|.6f|> 0.9"]
    binding["claim"].update(holds=False, status="fails")
    binding["text"] = "0.850000"
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    assert changes(diff) == {"claims_changed": 1, "printed_changed": 1}
    (claim,) = diff["claims"]
    assert (claim["key"], claim["expect"], claim["release"], claim["build"]) == (
        "scaling.dk64.unscaled.max_weight",
        "> 0.9",
        "holds",
        "fails",
    )
    assert claim["locations"] == ["article/index.qmd:12"]


def test_a_library_upgrade_shows_the_versions_and_the_experiments_it_reran(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    build["values"]["values"]["environment.torch"] = "2.14.1+cu130"
    for experiment in ("parity", "timing"):
        build["values"]["versions"][experiment]["torch"] = "2.14.1+cu130"
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    rows = {(e["what"], e["release"], e["build"]) for e in diff["environment"]}
    assert rows == {
        ("torch", "2.13.0+cpu", "2.14.1+cu130"),
        ("parity ran with torch", "2.13.0+cpu", "2.14.1+cu130"),
        ("timing ran with torch", "2.13.0+cpu", "2.14.1+cu130"),
    }
    assert diff["build"]["versions"]["torch"] == "2.14.1+cu130"


def test_the_build_date_alone_is_not_an_environment_change(build, baseline, tmp_path):
    build["values"]["values"]["environment.build_date"] = "2026-10-12"
    snapshot = released(build, tmp_path)
    build["values"]["values"]["environment.build_date"] = "2026-10-13"
    assert changes(compare(snapshot, build["values"], build["bindings"], baseline)) == {}


def test_keys_added_and_removed_are_listed(build, baseline, tmp_path):
    snapshot = released(build, tmp_path)
    values = build["values"]["values"]
    values["multihead.weights_shape"] = values.pop("multihead.output_shape")
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    assert (diff["keys_added"], diff["keys_removed"]) == (["multihead.weights_shape"], ["multihead.output_shape"])


# ---- the command -------------------------------------------------------------------


def run_diff(tmp_path, *snapshot):
    write_json(tmp_path / "values.json", read_json(FIXTURES / "values.json"))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "diff",
            "--values",
            tmp_path / "values.json",
            "--bindings",
            FIXTURES / "bindings.json",
            "--baseline",
            FIXTURES / "baseline.yaml",
            "--json",
            tmp_path / "diff.json",
            "--md",
            tmp_path / "diff.md",
            *snapshot,
        ],
        capture_output=True,
        text=True,
    )


@pytest.mark.workflow
def test_before_the_first_release_the_diff_says_so(tmp_path):
    proc = run_diff(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "No release yet" in (tmp_path / "diff.md").read_text()
    assert json.loads((tmp_path / "diff.json").read_text()) == {"against": None, "status": "no release yet"}


@pytest.mark.workflow
def test_release_then_diff_on_the_command_line(tmp_path):
    write_json(tmp_path / "audit.json", {"summary": {"reproduced": 7}, "entries": []})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "articlekit",
            "release",
            "--label",
            "v1",
            "--values",
            FIXTURES / "values.json",
            "--bindings",
            FIXTURES / "bindings.json",
            "--audit",
            tmp_path / "audit.json",
            "--releases",
            tmp_path / "releases",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    proc = run_diff(tmp_path, tmp_path / "releases/v1/snapshot.json")
    assert proc.returncode == 0, proc.stderr
    assert "# What changed since release `v1`" in (tmp_path / "diff.md").read_text()


@pytest.mark.workflow
def test_a_malformed_snapshot_fails_naming_the_file_and_the_entry(build, tmp_path):
    """Written malformed with a digest that matches (as a faulty writer
    would): the digest passes, the schema names the entry."""
    path = tmp_path / "releases/v1/snapshot.json"
    snapshot = copy.deepcopy(released(build, tmp_path, label="v1"))
    del snapshot["bindings"]["parity.mha.max_abs_diff|.2e|< 1e-12"]["text"]
    write_json(path, sealed(snapshot))
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(path)
    assert f"{path}: bindings['parity.mha.max_abs_diff|.2e|< 1e-12']: 'text' is a required property" in str(
        caught.value
    )

    proc = run_diff(tmp_path, path)
    assert proc.returncode == 1
    assert str(path) in proc.stderr and "'text' is a required property" in proc.stderr


def test_a_snapshot_that_is_not_json_fails_naming_the_file_and_line(tmp_path):
    path = tmp_path / "snapshot.json"
    path.write_text('{"label": "v1",\n  oops\n}')
    with pytest.raises(SnapshotError, match=rf"{path}:2:"):
        load_snapshot(path)


def test_where_a_timing_ran_is_an_environment_change_not_a_text(build, baseline, tmp_path):
    build["values"]["values"]["timing.hostname"] = "laptop"
    snapshot = released(build, tmp_path)
    build["values"]["values"]["timing.hostname"] = "node-7"
    diff = compare(snapshot, build["values"], build["bindings"], baseline)
    assert changes(diff) == {"environment_changed": 1}
    assert diff["environment"] == [{"what": "timing.hostname", "release": "laptop", "build": "node-7"}]


def test_the_committed_release_against_the_same_results_from_an_avx2_cpu():
    """The committed snapshot was made where PyTorch ran AVX-512 kernels.
    The same results with their last bits rounded differently, as an AVX2
    CPU gives them, are machine noise: nothing changed beyond its rule."""
    import math

    from articlekit.data.baseline import load_baseline as load

    root = Path(__file__).resolve().parent.parent
    (snapshot_path,) = (root / "releases").glob("numpy-2.4.6_torch-2.13.0+cpu/snapshot.json")
    snapshot = load_snapshot(snapshot_path)
    assert snapshot["values"]["environment.torch_cpu_capability"] == "AVX512"

    def nudged(value, ulps=2):
        if isinstance(value, list):
            return [nudged(v, ulps) for v in value]
        if isinstance(value, float) and value:
            for _ in range(ulps):
                value = math.nextafter(value, math.inf)
        return value

    values = dict(snapshot["values"], **{"environment.torch_cpu_capability": "AVX2"})
    moved = [
        "example.weights",
        "multihead.weights",
        "errors.wrong_axis.axis_last_row_sums",
        "parity.cross.sdpa_max_abs_diff",
        "parity.mha.weights_max_abs_diff",
    ]
    for key in moved:
        values[key] = nudged(values[key])
    build_doc = {"values": values, "sources": snapshot["sources"], "versions": snapshot["versions"]}
    diff = compare(snapshot, build_doc, {"bindings": snapshot["bindings"]}, load(root / "baseline/published.yaml"))
    assert diff["numbers"] == [] and diff["texts"] == []
    assert sorted(r["key"] for r in diff["within_rule"]) == sorted(moved)
    assert all("machine noise" in r["why"] or "printed precision" in r["why"] for r in diff["within_rule"])
    assert diff["machine"] == [{"what": "torch_cpu_capability", "release": "AVX512", "build": "AVX2"}]


def test_an_erratum_listed_first_does_not_hide_the_keys_noise_bound():
    """The published baseline lists the headline, parity.max_abs_diff_overall,
    first as an erratum (the edition's "largest difference"), then as noise
    < 5e-15. An erratum says what the edition printed, not how far two builds
    may differ: the diff, the matrix and reproduce judge the key by its noise
    bound, not by the float rule the erratum used to leave it to."""
    from articlekit.review.agreement import between_builds

    published = load_baseline(ROOT / "baseline" / "published.yaml")
    assert [e.cls for e in published.for_key("parity.max_abs_diff_overall")][:2] == ["erratum", "noise"]
    rule, test = between_builds("parity.max_abs_diff_overall", published, Publishing())
    assert rule == "noise < 5e-15"
    assert test(8.881784197001252e-16, 4.440892098500626e-16)[0]  # 2 ULPs of 1.0 apart, far more of itself
    assert not test(8.881784197001252e-16, 1e-3)[0]


# ---- a new article's diff (issue 27, friction 9) -----------------------------------------


def new_article_build(entropies, python="3.11.7", matplotlib="3.11.2"):
    """A build of a new article: one experiment, no environment record (the
    versions are those its artifact recorded), a list value."""
    source = {"artifact": "results/entropy.json", "script": "experiments/entropy.py", "experiment": "entropy"}
    values = {"entropy.entropies": entropies, "entropy.params.temperatures": [0.5, 2.0]}
    return {
        "values": values,
        "sources": {key: source for key in values},
        "versions": {"entropy": {"python": python, "matplotlib": matplotlib}},
    }


def new_article_release(build):
    return {**build, "label": "matplotlib-3.11.2", "released_at": "2026-12-01T00:00:00+00:00", "bindings": {}}


def item_baseline(tmp_path, check="< 1", cls="noise"):
    path = tmp_path / "published.yaml"
    entry = {
        "id": "entropy.first",
        "class": cls,
        "published": "0.429",
        "value": 0.429,
        "key": "entropy.entropies[0]",
        "fmt": ".3f",
        "where": {"section": "Entropy", "quote": "0.429"},
    }
    path.write_text(
        yaml.safe_dump(
            {
                "edition": {"title": "t", "source": "s", "date": "2026-12-01", "versions": {"python": "3.11"}},
                "entries": [{**entry, **({"check": check} if check else {})}],
            }
        ),
        encoding="utf-8",
    )
    return load_baseline(path)


def test_a_check_on_a_list_item_is_judged_on_that_item_in_both_builds(tmp_path):
    """'< 1' on entropy.entropies[0]: both builds' first item meet it, so its
    move is noise; the list as a whole was asked it before ("neither side
    meets '< 1'") and every build was a change."""
    baseline = item_baseline(tmp_path)
    release = new_article_release(new_article_build([0.429, 0.182]))
    diff = diff_module.compare(release, new_article_build([0.4291, 0.182]), {"bindings": {}}, baseline)
    assert diff["numbers"] == []
    (row,) = diff["within_rule"]
    assert row["key"] == "entropy.entropies"
    assert row["rule"] == "[0] noise < 1; other items: floats within 16 ULPs, the rest equal"
    assert row["why"] == "[0]: both meet '< 1'; other items: equal"
    assert "neither side" not in to_markdown(diff)


@pytest.mark.parametrize(
    "entropies, why",
    [
        ([1.2, 0.182], "[0]: this build breaks '< 1'; other items: equal"),  # the item its check governs
        ([0.429, 0.19], "[0]: equal; other items: "),  # an item no entry governs: the float rule
        ([0.429], "[0]: equal; other items: not equal"),  # an item gone
        ([], "[0] is not in both builds"),
    ],
)
def test_the_list_changes_when_its_item_breaks_its_check_or_another_item_moves(tmp_path, entropies, why):
    baseline = item_baseline(tmp_path)
    release = new_article_release(new_article_build([0.429, 0.182]))
    diff = diff_module.compare(release, new_article_build(entropies), {"bindings": {}}, baseline)
    (row,) = diff["numbers"]
    assert row["key"] == "entropy.entropies" and row["why"].startswith(why)


def test_an_exact_entry_on_a_list_item_judges_it_at_its_printed_precision(tmp_path):
    baseline = item_baseline(tmp_path, check=None, cls="exact")
    release = new_article_release(new_article_build([0.429, 0.182]))
    same = diff_module.compare(release, new_article_build([0.4291, 0.182]), {"bindings": {}}, baseline)
    assert same["numbers"] == [] and same["within_rule"][0]["why"].startswith("[0]: equal at the printed precision")
    moved = diff_module.compare(release, new_article_build([0.431, 0.182]), {"bindings": {}}, baseline)
    assert moved["numbers"][0]["why"].startswith("[0]: printed 0.429 then, 0.431 now")


def test_a_new_articles_diff_header_names_both_environments_from_what_each_recorded():
    """No environment experiment: each side's versions are those its artifacts
    recorded, Python always, the declared libraries after it."""
    release = new_article_release(new_article_build([0.429, 0.182], matplotlib="3.10.0"))
    diff = diff_module.compare(
        release,
        new_article_build([0.429, 0.182]),
        {"bindings": {}},
        None,
        parse_publishing({"libraries": {"python": "Python", "matplotlib": "Matplotlib"}}),
    )
    md = diff_module.to_markdown(
        diff, parse_publishing({"libraries": {"python": "Python", "matplotlib": "Matplotlib"}})
    )
    assert "frozen 2026-12-01T00:00:00+00:00: Python 3.11.7, Matplotlib 3.10.0.  \n" in md
    assert "\nThis build: Python 3.11.7, Matplotlib 3.11.2.\n" in md
    assert ": ." not in md


def test_with_no_library_declared_the_header_still_names_python_and_says_so():
    release = new_article_release(new_article_build([0.429, 0.182]))
    diff = diff_module.compare(release, new_article_build([0.429, 0.182]), {"bindings": {}}, None, Publishing())
    md = diff_module.to_markdown(diff, Publishing())
    said = "Python 3.11.7; no other library declared (publishing.libraries)."
    assert f"+00:00: {said}  \n" in md and f"\nThis build: {said}\n" in md
    assert diff["build"]["versions"] == {"python": "3.11.7"}


def test_a_declared_library_no_experiment_recorded_is_said_to_be_unrecorded():
    publishing = parse_publishing({"libraries": {"numpy": "NumPy", "matplotlib": "Matplotlib"}})
    release = new_article_release(new_article_build([0.429, 0.182]))
    diff = diff_module.compare(release, new_article_build([0.429, 0.182]), {"bindings": {}}, None, publishing)
    assert "This build: Python 3.11.7, Matplotlib 3.11.2 (NumPy: not recorded)." in diff_module.to_markdown(
        diff, publishing
    )
