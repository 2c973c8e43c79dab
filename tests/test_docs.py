"""The documentation says what is there: a README short enough to read
first, links that lead somewhere, and no path, module or command that the
tree no longer has.

The README is what it is (the quick start, the outputs, the layout, where
to read next); everything else is in docs/. Nothing here judges the prose:
only what a reader would follow (a link, a path, a module, a command) is
checked against the tree, so a move of a file that leaves a document
pointing at the old place fails here, naming the document and the line.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [README] + DOCS
README_MAX_LINES = 250

# The quick start's two commands, as the issue that split the README
# promised to keep them; CI runs the second.
BUILD_COMMAND = "pip install -r requirements-dev.txt && snakemake --cores 4"
TEST_COMMAND = "python -m pytest"

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
# Paths of the repository that a document names; a generated folder
# (build/, results/) or a placeholder (<name>, {label}) is not checked.
PATH = re.compile(
    r"(?<![\w./-])((?:articlekit|tests|benchmarks|config|profiles|examples|experiments|docs|\.ci)/[\w.*/-]*)"
)
MODULE = re.compile(r"(?<![\w./-])(articlekit(?:\.[A-Za-z_]\w*)+)")
COMMAND = re.compile(r"(?:python -m |`)articlekit ([a-z][a-z_]*)\b")


def shown(path):
    return path.relative_to(ROOT).as_posix()


def lines_of(path):
    return path.read_text(encoding="utf-8").splitlines()


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    inside = False
    for number, line in enumerate(lines_of(path), 1):
        if FENCE.match(line.strip()):
            inside = not inside
            continue
        if not inside:
            yield number, line


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped
    (inline code keeps its text), spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    found, seen = set(), {}
    for _, line in prose_lines(path):
        match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path):
    """(line, target) of every markdown link outside code."""
    for number, line in prose_lines(path):
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            yield number, target


# A file that a document's walk-through writes into a new article
# (docs/authoring.md; tests/test_new_article.py writes it): not this tree's.
WALKTHROUGH_WRITES = re.compile(r"<!-- new-article: write (\S+) -->")
# A file of the skeleton `articlekit new` writes (experiments/harmonic.py), as a new article has it.
SKELETON = ROOT / "articlekit" / "skeleton" / "article"


def named_paths(path):
    """(line, path) of every repository path the document names, code included."""
    written = set(WALKTHROUGH_WRITES.findall(path.read_text(encoding="utf-8")))
    for number, line in enumerate(lines_of(path), 1):
        for match in PATH.finditer(line):
            name = match.group(1).rstrip(".,:;")
            following = line[match.end() : match.end() + 1]
            if following in ("<", "{") or "<" in name:
                continue  # a placeholder: experiments/<name>.py
            if (
                any(re.fullmatch(r"[A-Z][A-Z_]*", Path(part).stem) for part in name.split("/")[1:])
                and not (ROOT / name).exists()
            ):
                continue  # a placeholder: experiments/NAME.py
            if name in written or (SKELETON / name).is_file():
                continue  # what the walk-through or `articlekit new` writes into a new article
            yield number, name


def test_the_readme_is_short():
    count = len(lines_of(README))
    assert count < README_MAX_LINES, (
        f"README.md has {count} lines (at most {README_MAX_LINES - 1}): move the detail into docs/ "
        "and link to it from 'Where to read next'"
    )


def quick_start_commands():
    """The lines of the first code block under '## Quick start'."""
    lines = lines_of(README)
    start = next(i for i, line in enumerate(lines) if line.strip() == "## Quick start")
    fence = next(i for i in range(start, len(lines)) if FENCE.match(lines[i].strip()))
    end = next(i for i in range(fence + 1, len(lines)) if FENCE.match(lines[i].strip()))
    return [line.strip() for line in lines[fence + 1 : end] if line.strip()]


def test_the_quick_start_is_the_two_commands_it_always_was():
    assert quick_start_commands() == [BUILD_COMMAND, TEST_COMMAND]


def test_the_readme_test_command_is_the_one_ci_runs():
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for line in ci if line.strip() and not line.strip().startswith("#")]
    readme_test = quick_start_commands()[-1]
    assert readme_test in commands, (
        f".ci/run does not run the README's test command {readme_test!r}: keep the two in step"
    )
    installs = [line for line in commands if "pip install" in line]
    assert any("-r requirements-dev.txt" in line for line in installs), (
        ".ci/run does not install requirements-dev.txt, as the README's quick start does"
    )


@pytest.mark.parametrize("document", DOCUMENTS, ids=shown)
def test_every_relative_link_leads_to_a_file_and_its_heading(document):
    broken = []
    for number, target in links(document):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto:
        file_part, _, anchor = target.partition("#")
        destination = (document.parent / file_part).resolve() if file_part else document
        where = f"{shown(document)}:{number}: ({target})"
        if not destination.exists():
            broken.append(f"{where} no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{where} {shown(destination)} has no heading with the anchor #{anchor}")
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)


@pytest.mark.parametrize("document", DOCUMENTS, ids=shown)
def test_every_path_it_names_exists(document):
    missing = []
    for number, name in named_paths(document):
        found = list(ROOT.glob(name.rstrip("/"))) if "*" in name else [ROOT / name]
        if not any(path.exists() for path in found):
            missing.append(f"{shown(document)}:{number}: {name}")
    assert not missing, "paths the tree does not have (moved? fix the document):\n" + "\n".join(missing)


def module_file(dotted):
    path = ROOT.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def top_level_names(path):
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


@pytest.mark.parametrize("document", DOCUMENTS, ids=shown)
def test_every_module_it_names_exists(document):
    """articlekit.data.edition is a module; articlekit.data.edition.verdicts
    a module and a name it defines."""
    missing = []
    for number, line in enumerate(lines_of(document), 1):
        for dotted in MODULE.findall(line):
            parts = dotted.split(".")
            known = max((i for i in range(1, len(parts) + 1) if module_file(".".join(parts[:i]))), default=0)
            rest = parts[known:]
            if known < 1 or (rest and rest[0] not in top_level_names(module_file(".".join(parts[:known])))):
                missing.append(f"{shown(document)}:{number}: {dotted}")
    assert not missing, "modules or names articlekit does not have:\n" + "\n".join(missing)


@pytest.mark.parametrize("document", DOCUMENTS, ids=shown)
def test_every_articlekit_command_it_names_exists(document):
    from articlekit.__main__ import COMMANDS

    missing = []
    for number, line in enumerate(lines_of(document), 1):
        for command in COMMAND.findall(line):
            if command not in COMMANDS:
                missing.append(f"{shown(document)}:{number}: python -m articlekit {command}: no such command")
            elif module_file(COMMANDS[command][0]) is None:
                missing.append(f"{shown(document)}:{number}: {command}: its module {COMMANDS[command][0]} is gone")
    assert not missing, "\n".join(missing)


def layout_entries():
    """(line, path) of each entry of the README's layout block: a name at
    the start of a line, or indented under the folder above it."""
    lines = lines_of(README)
    start = next(i for i, line in enumerate(lines) if line.strip() == "## Layout")
    fence = next(i for i in range(start, len(lines)) if FENCE.match(lines[i].strip()))
    parent = None
    for i in range(fence + 1, len(lines)):
        line = lines[i]
        if FENCE.match(line.strip()):
            return
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name = line.split()[0]
        if not line.startswith(" "):
            parent = name if name.endswith("/") else None
            yield i + 1, name
        elif line.startswith("  ") and not line.startswith("   ") and parent:
            yield i + 1, parent + name


def test_the_layout_names_what_is_there():
    missing = [
        f"README.md:{line}: {name}" for line, name in layout_entries() if "<" not in name and not (ROOT / name).exists()
    ]
    assert not missing, "the README's layout names what the tree lacks:\n" + "\n".join(missing)


def test_the_layout_shows_every_stage_of_articlekit():
    listed = {name for _, name in layout_entries() if name.startswith("articlekit/")}
    packages = {f"articlekit/{path.parent.name}/" for path in (ROOT / "articlekit").glob("*/__init__.py")}
    assert packages <= listed, f"the README's layout leaves out {sorted(packages - listed)}"


def test_every_document_is_reachable_from_the_readme():
    reached, todo = {README}, [README]
    while todo:
        document = todo.pop()
        for _, target in links(document):
            file_part = target.partition("#")[0]
            if not file_part or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            destination = (document.parent / file_part).resolve()
            if destination.suffix == ".md" and destination.exists() and destination not in reached:
                reached.add(destination)
                todo.append(destination)
    orphans = [shown(doc) for doc in DOCS if doc.resolve() not in reached]
    assert not orphans, f"no link leads to {orphans} from README.md: link it from 'Where to read next'"


# ---- every command the docs show works as shown (issue 27, friction 10) ------------------

# `python -m articlekit X` or `articlekit X` where code starts (a fenced line, an
# inline code span, after && or a prompt), and `python -m articlekit.MODULE`.
SHOWN_COMMAND = re.compile(
    r"(?:(?:^|&&\s*|\$\s*)articlekit|python -m articlekit)(?: (-{0,2}[a-z][a-z_-]*))?(?=[\s`]|$)"
)
SHOWN_MODULE = re.compile(r"python -m (articlekit(?:\.[a-z_]+)+)")
SHOWN_SNAKEMAKE = re.compile(r"(?:^|&&\s*|\$\s*|`)snakemake((?: [^\s`&|;#)]+)*)")
# Snakemake's options the docs show that take a value (the value is no target)
VALUED = {"--cores", "-j", "--profile", "--configfile", "--report", "--until", "--omit-from", "--forcerun", "-R"}
RULE_VALUED = {"--forcerun", "-R", "--omit-from", "--until"}  # ... and that value names a rule (or a file)


def code_segments(path):
    """(line, text) of the code a document shows: fenced lines and inline code spans."""
    inside = False
    for number, line in enumerate(lines_of(path), 1):
        if FENCE.match(line.strip()):
            inside = not inside
            continue
        if inside:
            yield number, line.strip()
        else:
            for match in INLINE_CODE.finditer(line):
                yield number, match.group(0).strip("`")


def shown_commands():
    """{('command', X) | ('module', M) | ('target', T): first 'doc:line'} over README.md and docs/."""
    found = {}
    for document in DOCUMENTS:
        for number, code_text in code_segments(document):
            where = f"{shown(document)}:{number}"
            for match in SHOWN_COMMAND.finditer(code_text):
                found.setdefault(("command", match.group(1)), where)
            for match in SHOWN_MODULE.finditer(code_text):
                found.setdefault(("module", match.group(1)), where)
            for match in SHOWN_SNAKEMAKE.finditer(code_text):
                tokens = match.group(1).split()
                for i, token in enumerate(tokens):
                    after = tokens[i - 1] if i else None
                    if (
                        token.startswith("-")
                        or "=" in token
                        or token.isdigit()
                        or "<" in token
                        or (after in VALUED and after not in RULE_VALUED)
                        or not re.fullmatch(r"[a-z_]+", token)
                    ):
                        continue  # an option, its value, a config setting, a file or a placeholder
                    found.setdefault(("target", token), where)
    return found


def test_the_docs_show_the_commands_this_test_checks():
    kinds = {kind for kind, _ in shown_commands()}
    assert kinds == {"command", "module", "target"}
    assert {
        ("command", "lint"),
        ("command", "--help"),
        ("target", "release"),
        ("module", "articlekit.experiment.sweep"),
    } <= set(shown_commands())


@pytest.mark.workflow
def test_python_m_articlekit_help_exits_0_and_lists_every_command_and_module():
    import subprocess
    import sys

    from articlekit.__main__ import COMMANDS, MODULES

    for flag in ("--help", "-h"):
        done = subprocess.run(
            [sys.executable, "-m", "articlekit", flag],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        listed = re.findall(r"^  (\S+)  ", done.stdout, re.M)
        assert set(COMMANDS) <= set(listed), done.stdout
        assert all(f"python -m {module} " in done.stdout for module in MODULES), done.stdout


def test_a_command_that_is_not_one_exits_2_naming_the_closest(capsys):
    from articlekit.__main__ import main

    assert main(["lnit"]) == 2
    assert "unknown command 'lnit'; did you mean 'lint'?" in capsys.readouterr().err


def test_every_module_the_workflow_runs_is_listed_in_the_help():
    from articlekit.__main__ import MODULES

    rules = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "articlekit/workflow/rules").glob("*.smk")))
    run = set(SHOWN_MODULE.findall(rules))
    assert run and run <= set(MODULES), f"not in articlekit/__main__.py MODULES: {sorted(run - set(MODULES))}"


def exit_code(call):
    """What a command's main() ends with: its return value, or argparse's SystemExit code."""
    try:
        code = call()
    except SystemExit as exc:
        code = exc.code
    return code or 0


@pytest.mark.parametrize(
    "kind, name", sorted((k, n or "") for k, n in shown_commands() if k != "target"), ids=lambda v: v or "articlekit"
)
def test_every_articlekit_command_the_docs_show_answers_help(kind, name, capsys):
    """Each `python -m articlekit X`, `articlekit X` and `python -m
    articlekit.MODULE` a document shows runs its --help with exit 0 (the
    same dispatch as the console script)."""
    import importlib

    from articlekit.__main__ import COMMANDS, main

    where = shown_commands()[(kind, name or None)]
    command = name and not name.startswith("-")
    if kind == "command" and command:
        assert name in COMMANDS, f"{where}: python -m articlekit {name}: no such command"
    if kind == "module":
        code = exit_code(lambda: importlib.import_module(name).main(["--help"]))
    else:
        code = exit_code(lambda: main([name, "--help"] if command else ["--help"]))
    assert code == 0, f"{where}: its --help exits {code}"
    assert "usage:" in capsys.readouterr().out, where


@pytest.mark.workflow
def test_every_snakemake_target_the_docs_show_is_a_rule_of_the_workflow():
    import subprocess

    done = subprocess.run(
        ["snakemake", "--list-rules"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rules = set(done.stdout.split())
    targets = {name: where for (kind, name), where in shown_commands().items() if kind == "target"}
    assert {"release", "matrix", "robustness"} <= set(targets)
    missing = [
        f"{where}: snakemake {name}: no such rule" for name, where in sorted(targets.items()) if name not in rules
    ]
    assert not missing, "\n".join(missing)


# ---- what the docs say the tool prints is what it prints ----------------------------------


def test_the_failed_claim_message_the_docs_show_is_binds_with_its_fix():
    from articlekit.article.bind import failed_message

    said = failed_message(
        {"location": "file:line", "key": "KEY", "expect": "EXPECT", "value": "V", "status": "fails", "holds": False},
        {"KEY": {"script": "experiments/NAME.py", "experiment": "NAME"}},
    )
    assert "If the prose is wrong, change the claim" in said
    for document in ("docs/authoring.md", "docs/reference.md"):
        shown_lines = [text for _, text in code_segments(ROOT / document)]
        assert said in shown_lines, f"{document} does not show bind's message for a failed claim:\n{said}"


def test_the_timing_keys_the_docs_bind_are_the_keys_measure_produces():
    """measure.py's docstring and docs/authoring.md return the ratio under a
    name of its own and bind NAME.<name>.estimate: the keys that run()'s
    result flattens to, computed on a stand-in clock."""
    from articlekit.data.values import flatten
    from articlekit.experiment import measure
    from tests.test_measure import FakeClock

    clock = FakeClock()
    timed = measure.compare(
        {"loop": clock.timer(lambda: 6e-3), "vector": clock.timer(lambda: 2e-3)},
        baseline="loop",
        rounds=7,
        warmup=2,
        sample_ms=10,
        clock=clock,
    )
    doc = measure.__doc__
    returned = re.search(r"return (\{.*\})", doc).group(1)
    values = flatten(eval(returned, {"timed": timed}), "NAME")  # the docstring's own line, as run() returns it
    named = set(re.findall(r"`(NAME\.[\w.]+)`", doc))
    whole = flatten(timed, "NAME")  # "returning all of `timed` instead"
    assert named and all(key in values or key in whole for key in named), named - set(values) - set(whole)
    assert {"NAME.speedup.estimate", "NAME.speedup.low", "NAME.speedup.high"} <= named & set(values)
    guide = (ROOT / "docs/authoring.md").read_text(encoding="utf-8")
    assert '"speedup": timed["ratios"]["numpy"]' in guide and "darts.speedup.estimate" in guide
