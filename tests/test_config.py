"""Bad configuration is refused before any job runs, naming file, line and key."""

import copy
import re

import pytest
import yaml

from pathlib import Path

from articlekit.data.config import ConfigError, article_schema, check_config, check_syntax, merged_config
from articlekit.experiment.declared import declared_experiments
from tests.workspace import PROJECT_ROOT

ARTICLE_SCHEMA = PROJECT_ROOT / "config/schema.yaml"
DECLARED = declared_experiments(
    list(yaml.safe_load((PROJECT_ROOT / "config.yaml").read_text())["experiments"]), PROJECT_ROOT
)
# config/schema.yaml with each experiment's section as its script declares it (PARAMETERS)
SCHEMA = article_schema(yaml.safe_load(ARTICLE_SCHEMA.read_text()), DECLARED)


@pytest.fixture
def config_file(tmp_path):
    """A copy of config.yaml with every experiment's parameters written out
    (their declared defaults, as a section each) that a test may spoil,
    and its parsed content."""
    path = tmp_path / "config.yaml"
    sections = "".join(
        f"\n{name}:\n" + "".join(f"  {key}: {flow(value)}\n" for key, value in found.defaults.items())
        for name, found in DECLARED.items()
        if found.defaults
    )
    text = (PROJECT_ROOT / "config.yaml").read_text() + sections
    path.write_text(text)
    return path, yaml.safe_load(text)


def flow(value):
    """A value as YAML writes it on one line (a list as [16, 64, 512])."""
    return yaml.safe_dump([value], default_flow_style=True, width=1000).strip()[1:-1]


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_the_shipped_configurations_are_valid():
    for files in (["config.yaml"], ["config.yaml", "config/test.yaml"]):
        for name in files:
            check_syntax(PROJECT_ROOT / name)
        config, sources = merged_config([PROJECT_ROOT / name for name in files], PROJECT_ROOT)
        check_config(config, SCHEMA, sources)


def test_the_test_config_only_overrides_keys_that_config_yaml_or_a_script_sets():
    """config/test.yaml is an override merged over config.yaml, not a copy
    of it: every key it sets is one the build already has (config.yaml's,
    or an experiment's declared parameter), so a misspelt or stale key in
    it cannot pass unnoticed; and it is small."""
    base, _ = merged_config([PROJECT_ROOT / "config.yaml"], PROJECT_ROOT)
    override = check_syntax(PROJECT_ROOT / "config/test.yaml")

    def unknown(given, known, prefix=()):
        for key, value in given.items():
            if not isinstance(known, dict) or key not in known:
                yield ".".join(map(str, prefix + (key,)))
            elif isinstance(value, dict):
                yield from unknown(value, known[key], prefix + (key,))

    assert list(unknown(override, base)) == []
    assert len((PROJECT_ROOT / "config/test.yaml").read_text().splitlines()) < 60


def test_a_default_from_a_script_is_named_at_its_line_in_the_script(tmp_path):
    """A value that comes from an experiment's declared default (no config
    file sets it) is named at the script's line, as experiments/NAME.py:LINE."""
    override = tmp_path / "small.yaml"
    override.write_text("timing:\n  loop_max_T: 16\n")
    config, sources = merged_config([PROJECT_ROOT / "config.yaml", override], PROJECT_ROOT)
    with pytest.raises(ConfigError) as caught:
        check_config(
            config,
            SCHEMA,
            [str(Path(p).relative_to(PROJECT_ROOT)) if str(p).startswith(str(PROJECT_ROOT)) else p for p in sources],
        )
    script = PROJECT_ROOT / "experiments/timing.py"
    line = next(i for i, text in enumerate(script.read_text().splitlines(), 1) if '"default": 128' in text)
    assert f"experiments/timing.py:{line}: timing.T: 128 is more than timing.loop_max_T = 16" in str(caught.value)


def test_every_error_is_listed_with_its_file_line_and_key(config_file):
    path, _ = config_file
    spoiled = path.read_text().replace("rounds: 21", "rounds: 1").replace("  seed: 7\n", "  seed: seven\n")
    path.write_text(spoiled.replace("  rounds: 1\n", "  rounds: 1\n  bogus: 1\n"))
    with pytest.raises(ConfigError) as caught:
        check_config(yaml.safe_load(path.read_text()), SCHEMA, [path])
    message = str(caught.value)
    assert f"{path}:{line_of(path, '  rounds: 1')}: timing.rounds: 1 is less than the minimum of 6" in message
    assert f"{path}:{line_of(path, 'seed: seven')}: scaling.seed: 'seven' is not of type 'integer'" in message
    assert f"{path}:{line_of(path, 'bogus')}: timing.bogus: Additional properties are not allowed" in message


def test_a_value_from_the_command_line_is_named_as_such(config_file):
    path, config = config_file
    config = copy.deepcopy(config)
    config["timing"]["rounds"] = "2"  # what `--config` can hand over
    with pytest.raises(ConfigError, match=r"--config \(overriding .*config.yaml:\d+\): timing.rounds"):
        check_config(config, SCHEMA, [path])


def test_a_command_line_value_is_not_blamed_on_a_file_that_sets_another_type(config_file):
    path, config = config_file
    config = copy.deepcopy(config)
    config["strict"] = 1  # --config strict=1: 1 == True in Python, not in the schema
    config["timing"]["bogus"] = 1  # --config timing='{bogus: 1}': no file sets it
    with pytest.raises(ConfigError) as caught:
        check_config(config, SCHEMA, [path])
    message = str(caught.value)
    line = line_of(path, "strict: true")
    assert f"--config (overriding {path}:{line}): strict: 1 is not of type 'boolean'; write true or false" in message
    assert "\n  --config: timing.bogus: Additional properties are not allowed" in message


def test_heads_must_divide_d_model_and_both_keys_are_named(config_file):
    path, _ = config_file
    spoiled = path.read_text().replace("  heads: 4", "  heads: 3")
    path.write_text(spoiled)
    with pytest.raises(ConfigError) as caught:
        check_config(yaml.safe_load(spoiled), SCHEMA, [path])
    line = line_of(path, "heads: 3")
    assert f"{path}:{line}: multihead.heads: 3 does not divide multihead.d_model = 16" in str(caught.value)
    assert "choose one of 1, 2, 4, 8, 16, or change multihead.d_model" in str(caught.value)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", r": the file is empty"),
        ("- a\n- b\n", r":1: the top level must be keys"),
        # the slips an author makes, each said in their words, with the fix
        (
            "strict: true\nrenderer: [auto\n",
            r":3:1: not valid YAML: the \[ opened at line 2, column 11 is not closed "
            r"before this line; fix it there: close it with \]",
        ),
        (
            "e:\n  h: {figures: x.svg\n  n: 3\n",
            r":3:4: not valid YAML: the \{ opened at line 2, column 6 is not "
            r"closed .*close it with \}",
        ),
        (
            "a: 1\nb:\n\tc: 2\n",
            r":3:1: not valid YAML: a tab indents this line, and YAML indents with spaces only; "
            r"fix it there: replace the tab with spaces",
        ),
        ("a:\tb\n", r":1:3: not valid YAML: a tab after the key, and YAML separates with spaces only"),
        (
            "h:\n  n: 1\n   every: 10\n",
            r":3:\d+: not valid YAML: this line is indented by 3 spaces and line 2 above it "
            r"by 2, but line 2 already has its value; fix it there: .* indent it by 2 spaces",
        ),
        (
            "h:\n  n: 1\n every: 10\n",
            r":3:2: not valid YAML: this line is indented by 1 space and line 2 above it by "
            r"2, and no key above it is indented so; fix it there: .* indent it by 2 spaces",
        ),
        ("title: Sums: the naive loop\n", r":1:\d+: not valid YAML: a second ': ' on this line; fix it there: quote"),
        ('title: "Sums\nn: 3\n', r":3:1: not valid YAML: the quote opened at line 1, column 8 is never closed"),
    ],
)
def test_yaml_mistakes_are_named_with_the_file_and_line(tmp_path, text, expected):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(str(path)) + expected):
        check_syntax(path)


def test_a_key_given_twice_is_refused_with_both_lines(config_file):
    """Snakemake's reader keeps the second silently: a second n_keys: reached the experiment."""
    path, _ = config_file
    path.write_text(path.read_text().replace("  n_keys: 2000\n", "  n_keys: 2000\n  n_keys: 1000\n"))
    line = line_of(path, "n_keys: 1000")
    with pytest.raises(
        ConfigError,
        match=re.escape(f"{path}:{line}: scaling.n_keys: the key is given twice, at lines {line - 1} and {line}"),
    ):
        check_syntax(path)


def test_a_number_snakemake_reads_as_text_is_refused_with_a_spelling_it_reads(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("strict: true\nparity:\n  tolerance: 1e-7\n  label: '1e-7'\n")
    with pytest.raises(ConfigError) as caught:
        check_syntax(path)
    assert str(caught.value) == (
        f"{path}:3: parity.tolerance: 1e-7 is a number, but Snakemake reads config files as YAML 1.1, which takes "
        "it for the text '1e-7'; write 1.0e-7 (a dot and a signed exponent), or quote it if you mean the text"
    )


def test_a_byte_order_mark_is_nothing_and_a_bad_byte_is_named(config_file):
    path, config = config_file
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert check_syntax(path) == config
    line = line_of(path, "n_keys")
    path.write_bytes(path.read_bytes().replace(b"  n_keys: 2000", b"  n_keys: 2000 # \xb12", 1))
    with pytest.raises(ConfigError, match=re.escape(f"{path}:{line}:18: not UTF-8 (byte 0xb1")):
        check_syntax(path)


def test_a_misspelt_top_level_key_is_named_with_its_line_and_the_closest_key(tmp_path):
    """A section nobody reads (publishin:) is refused, not silently kept."""
    from articlekit.data.config import check_known_keys

    config_file = tmp_path / "config.yaml"
    config_file.write_text("strict: true\nexperiments: {harmonic: {}}\nharmonic: {n: 3}\npublishin: {}\n")
    config = yaml.safe_load(config_file.read_text())
    with pytest.raises(ConfigError, match=r"config.yaml:4: publishin: is not a known key; did you mean publishing\?"):
        check_known_keys(config, ["strict", "experiments", "publishing", "harmonic"], [config_file])
    check_known_keys(
        {k: v for k, v in config.items() if k != "publishin"},
        ["strict", "experiments", "publishing", "harmonic"],
        [config_file],
    )


# ---- numbers as the schema means them ------------------------------------------------

MODULE_SCHEMA = PROJECT_ROOT / "articlekit/workflow/schemas/schema.yaml"


def spoiled(config_file, *edits):
    """config.yaml with each (old, new) edit made, read as the build reads it."""
    path, _ = config_file
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path.write_text(text)
    return path, check_syntax(path)


def problems(config, schema, path, **given):
    with pytest.raises(ConfigError) as caught:
        check_config(config, schema, [path], **given)
    return str(caught.value)


@pytest.mark.parametrize(
    "old, new, schema, key, spelled",
    [
        # the issue's: the sweep then flagged 0 claims instead of 3 (no share is above NaN)
        ("flag_share: 0.05", "flag_share: .nan", MODULE_SCHEMA, "robustness.flag_share", ".nan"),
        ("    runtime: 15\n", "    runtime: .inf\n", MODULE_SCHEMA, "experiments.timing.runtime", ".inf"),
        ("sample_ms: 5\n", "sample_ms: .NaN\n", SCHEMA, "timing.sample_ms", ".nan"),
        ("underflow_scale: 10.0", "underflow_scale: -.inf", SCHEMA, "errors.underflow_scale", "-.inf"),
    ],
)
def test_nan_and_infinity_are_refused_at_the_line_where_a_number_is_meant(config_file, old, new, schema, key, spelled):
    path, config = spoiled(config_file, (old, new))
    line = line_of(path, new.strip())
    message = problems(config, schema, path)
    assert f"{path}:{line}: {key}: {spelled} is not a finite number, and a finite number is meant here" in message
    assert "write a number" in message


def test_a_schema_may_allow_the_infinities_by_saying_so(tmp_path):
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        "type: object\nproperties:\n  limit: {type: number, x-non-finite: true}\n  share: {type: number}\n"
    )
    check_config({"limit": float("inf"), "share": 0.5}, schema)
    with pytest.raises(ConfigError, match="share: .nan is not a finite number"):
        check_config({"limit": float("nan"), "share": float("nan")}, schema)


@pytest.mark.parametrize(
    "old, new, key, value, spelling",
    [
        # the issue's: it passed schema and footprint, then died in the job with a TypeError
        ("  n_keys: 2000\n", "  n_keys: 2000.0\n", "scaling.n_keys", "2000.0", "2000"),
        ("  rounds: 21\n", "  rounds: 2.1e+1\n", "timing.rounds", "21.0", "21"),
        ("  seed: 7\n", "  seed: 7.\n", "scaling.seed", "7.0", "7"),
    ],
)
def test_an_integer_yaml_reads_as_a_float_is_refused_with_the_spelling_to_use(
    config_file, old, new, key, value, spelling
):
    path, config = spoiled(config_file, (old, new))
    message = problems(config, SCHEMA, path)
    line = line_of(path, new.strip())
    assert (
        f"{path}:{line}: {key}: {value} is a float, and an integer is meant here: write {spelling} (no decimal point)"
    ) in message


def test_a_float_in_a_list_of_sizes_is_named_by_its_item(config_file):
    path, config = spoiled(config_file, ("  d_k: [16, 64, 512]", "  d_k: [16, 64.0, 512]"))
    assert f"{path}:{line_of(path, '64.0')}: scaling.d_k.1: 64.0 is a float" in problems(config, SCHEMA, path)


# ---- experiment names -------------------------------------------------------------------


def test_an_invalid_experiment_name_is_blamed_on_its_line_not_on_the_command_line(config_file):
    path, config = spoiled(config_file, ("  errors: {libraries", "  bad-name: {}\n  errors: {libraries"))
    message = problems(config, MODULE_SCHEMA, path)
    assert f"{path}:{line_of(path, 'bad-name')}: experiments.bad-name: 'bad-name' does not match" in message
    assert "letters, digits and _" in message and "--config" not in message


def rule_names():
    from articlekit.workflow.plan import reserved_rule_names

    return reserved_rule_names()


def test_the_rule_names_are_read_from_the_module_s_rules():
    names = rule_names()
    assert {"all", "audit", "values", "bind", "html", "gfm", "pdf", "diff", "release", "matrix", "robustness"} <= set(
        names
    )
    rule_files = sorted((PROJECT_ROOT / "articlekit/workflow/rules").glob("*.smk"))
    assert len(rule_files) >= 6, rule_files
    for path in rule_files:
        for declared in re.findall(r"^\s*rule (\w+):", path.read_text(), re.M):
            assert declared in names, (path.name, declared)


@pytest.mark.parametrize("name", ["audit", "values", "all"])
def test_an_experiment_named_like_a_rule_is_refused_with_the_fix(config_file, name):
    """It passed the schema and died in Snakemake's CreateRuleException."""
    path, config = spoiled(config_file, ("  errors: {libraries", f"  {name}: {{}}\n  errors: {{libraries"))
    message = problems(config, MODULE_SCHEMA, path, rule_names=rule_names())
    assert (
        f"{path}:{line_of(path, f'  {name}: {{}}')}: experiments.{name}: {name!r} is the name of one of the "
        "workflow's rules (all, audit, bind, "
    ) in message
    assert f"rename the experiment (experiments/{name}.py, its entry here and its section {name}:)" in message
    check_config(
        check_syntax(PROJECT_ROOT / "config.yaml"),
        MODULE_SCHEMA,
        [PROJECT_ROOT / "config.yaml"],
        rule_names=rule_names(),
    )


# ---- the seed sweep's size ----------------------------------------------------------------


def test_a_sweep_over_more_seeds_than_the_documented_maximum_is_refused_at_its_line(config_file):
    """100 million seeds planned for minutes without a word."""
    path, config = spoiled(config_file, ("  seeds: 100\n", "  seeds: 100000000\n"))
    assert (
        f"{path}:{line_of(path, 'seeds: 100000000')}: robustness.seeds: 100000000 is greater than the maximum of 100000"
    ) in problems(config, MODULE_SCHEMA, path)


def test_a_sweep_that_would_plan_too_many_jobs_says_how_many_and_the_chunk_that_fits(config_file):
    from articlekit.data.config import where
    from articlekit.workflow import settings

    path, config = spoiled(config_file, ("  seeds: 100\n", "  seeds: 100000\n"))
    check_config(config, MODULE_SCHEMA, [path])  # within the schema's maximum
    with pytest.raises(ValueError) as caught:
        settings.robustness(config, lambda key: where(config, key, [path]))
    swept = len(settings.robustness(merged_config([PROJECT_ROOT / "config.yaml"], PROJECT_ROOT)[0]).experiments)
    jobs = swept * 2000
    assert str(caught.value).startswith(
        f"{path}:{line_of(path, 'seeds: 100000')}: robustness.seeds = 100000 in chunks of 50 makes {jobs:,} jobs "
        f"({swept} experiments x 2,000 chunks), more than the {settings.MAX_SWEEP_JOBS:,} a sweep may plan"
    )
    enough = int(re.search(r"raise robustness.chunk to at least ([\d,]+)", str(caught.value)).group(1).replace(",", ""))
    config["robustness"]["chunk"] = enough
    assert swept * -(-100000 // enough) <= settings.MAX_SWEEP_JOBS
    settings.robustness(config)  # the chunk it names is enough


def test_the_timing_needs_three_runs_to_say_whether_one_disagrees(config_file):
    """The article prints the timing's interval between runs and whether a
    run lies outside what the others predict: config/schema.yaml refuses
    fewer runs, naming the line."""
    path, _ = config_file
    spoiled = path.read_text().replace("    runs: 11\n", "    runs: 2\n")
    path.write_text(spoiled)
    with pytest.raises(ConfigError) as caught:
        check_config(yaml.safe_load(spoiled), SCHEMA, [path])
    assert f"{path}:{line_of(path, 'runs: 2')}: experiments.timing.runs: 2 is less than the minimum of 3" in str(
        caught.value
    )
