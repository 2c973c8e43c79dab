"""The version matrix's environments: one isolated venv per `matrix:` entry.

    python -m articlekit.review.matrixenv lock    --label L --pin mylib==1.2.0 ... [--python 3.13] --out LOCK
    python -m articlekit.review.matrixenv install --label L --lock LOCK [--python 3.13] --venv DIR --out ENV.json
                                           [--warm MODULE ...]
    python -m articlekit.review.matrixenv run     --environment ENV.json --experiment NAME
                                           --params JSON --out RESULT.json

`uv` does the work; it reads the same package sources as this machine's pip
(`pip config list`: index URLs, find-links, the constraint file, the CA
certificate), so an environment resolves exactly what `pip install` would,
e.g. the CPU build of torch==2.13.0 from the find-links folder. Like pip, uv
is told to pick the best version across all of them (unsafe-best-match):
uv's own default stops at the first index that knows the package.

Each environment runs the Python its entry names (`python: "3.13"`), found
on this machine (find_python: uv's interpreters, pyenv's, the build's own),
or the build's own Python when it names none; never downloaded, so a Python
this machine lacks is an error saying how to get it.

lock resolves the pins without installing anything, for that Python: a pin
the index does not have, or a Python the machine lacks, fails here, before
any environment is built. install then imports the libraries the
experiments import (--warm: numpy, torch) and those they require, once, so
that their bytecode is cached in the venv (warm_up). install never fails
the build: an environment that does not install is recorded as such
({"installed": false, "log": ...}), so that the other environments are still
built and the matrix shows which one failed and where its log is. run then
records the experiment as not run in that environment.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from articlekit.core.errors import ArticlekitError, run_command
from articlekit.core.jsonio import read_json, write_json, write_text_atomic
from articlekit.core.log import log
from articlekit.data.classes import same_release
from articlekit.data.config import where as config_line

# Python itself is the environment's interpreter, not a pin.
UNPINNED = ("python",)
# What the project itself needs to run an experiment (besides the pins), and
# its build backend (pyproject.toml), installed up front so that the project
# installs without an isolated build environment of its own (seconds saved).
PROJECT_REQUIREMENTS = ["pyyaml>=6.0", "setuptools>=64"]
# Run by the venv's own Python at install: imports what the experiments will.
WARM_UP = Path(__file__).with_name("warmup.py")

# pip option -> the uv flag that means the same; list options take one flag each.
_PIP_TO_UV = {
    "index-url": "--default-index",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}
# Sections of `pip config list`, lowest precedence first (env overrides files).
_SECTIONS = ("global", "install", ":env:")


class MatrixConfigError(ArticlekitError):
    pass


class PythonNotFound(ArticlekitError, LookupError):
    pass


# ---- the matrix: section ----------------------------------------------------------


def pin_name(pin):
    """'numpy==1.26.4' -> 'numpy' (the distribution a pin names, normalised)."""
    name = pin.strip()
    for stop in "<>=!~;[ @":
        name = name.split(stop, 1)[0]
    return name.lower().replace("_", "-")


def required_pins(config):
    """The libraries every environment must pin: those the article records
    (publishing.libraries), Python aside. Unpinned, a library would be
    whatever the index has newest (for some, a multi-GB build)."""
    libraries = ((config.get("publishing") or {}).get("libraries")) or {}
    return [pin_name(lib) for lib in libraries if lib not in UNPINNED]


def check_matrix(config, config_files=()):
    """Raise MatrixConfigError listing what the schema cannot say: duplicate
    labels, pins missing a recorded library, a package pinned twice."""
    matrix = config.get("matrix") or {}
    problems, first_of = [], {}
    for i, entry in enumerate(matrix.get("environments", [])):
        label, pins = entry.get("label"), entry.get("pins", [])

        def where(i=i):  # looked up only for a problem: it reads the config files again
            return config_line(config, ("matrix", "environments", i, "label"), config_files)

        if label in first_of:
            problems.append(
                f"{where()}: matrix.environments[{i}].label: {label!r} is already the label of "
                f"entry {first_of[label]}; labels name folders (results/matrix/<label>), give each its own"
            )
        first_of.setdefault(label, i)
        names = [pin_name(p) for p in pins]
        for lib in required_pins(config):
            if lib not in names:
                problems.append(
                    f"{where()}: matrix.environments[{i}] ({label}) pins no {lib}: add e.g. "
                    f"'{lib}==<version>' (unpinned, {lib} would be whatever the index has newest)"
                )
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            problems.append(f"{where()}: matrix.environments[{i}] ({label}) pins {', '.join(twice)} more than once")
    if problems:
        raise MatrixConfigError("the matrix configuration is not usable:\n  " + "\n  ".join(problems))


# ---- package sources: pip's, handed to uv ---------------------------------------


def pip_settings(python=sys.executable):
    """{option: value} from `pip config list` (env variables over files)."""
    listed = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    by_section = {}
    for line in listed.splitlines():
        key, sep, value = line.partition("=")
        section, _, option = key.rpartition(".")
        if sep and section in _SECTIONS:
            by_section.setdefault(section, {})[option] = value.strip().strip("'\"")
    merged = {}
    for section in _SECTIONS:
        merged.update(by_section.get(section, {}))
    return merged


def uv_source_flags(settings):
    """uv command-line flags for pip's package sources, in pip's semantics."""
    flags = ["--index-strategy", "unsafe-best-match"]
    for option, flag in _PIP_TO_UV.items():
        for value in settings.get(option, "").split():
            flags += [flag, value]
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        flags.append("--no-index")
    return flags


def uv_environ(settings):
    """os.environ for uv: pip's CA certificate, if it sets one."""
    env = dict(os.environ)
    if settings.get("cert") and "SSL_CERT_FILE" not in env:
        env["SSL_CERT_FILE"] = settings["cert"]
    return env


def uv_executable():
    found = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if not found:
        raise FileNotFoundError("uv is not installed: pip install -r requirements-dev.txt (it lists uv)")
    return found


# ---- the interpreter: the entry's Python, found on this machine ------------------------

_VERSION_OF = "import platform; print(platform.python_version())"


def python_version(python):
    """'3.13.0': the version of the interpreter at `python`, asked of it; None
    when it does not run (a pyenv shim of a version not selected, say)."""
    try:
        done = subprocess.run([str(python), "-c", _VERSION_OF], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _pyenv_root():
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")


def python_candidates(request):
    """Interpreters that may be Python `request` ("3.13"), where this machine
    keeps them: the build's own, the one uv finds (its managed Pythons and the
    search path; uv never downloads one here), and pyenv's versions (uv does
    not look there, and on the path pyenv's shims run only the selected one)."""
    found = [sys.executable]
    try:
        done = subprocess.run(
            [uv_executable(), "python", "find", "--no-python-downloads", request],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode == 0 and done.stdout.strip():
            found.append(done.stdout.strip())
    except (FileNotFoundError, subprocess.TimeoutExpired):
        pass
    minor = ".".join(request.split(".")[:2])
    found += sorted(str(p) for p in (_pyenv_root() / "versions").glob(f"{request}*/bin/python{minor}"))
    return list(dict.fromkeys(found))


def _release(version):
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def find_python(request):
    """(path, version) of the newest interpreter on this machine that is
    Python `request` ('3.13' takes any 3.13.x, '3.13.0' only that one), or
    raise PythonNotFound saying where it looked and how to get one."""
    matches = [
        (path, version)
        for path in python_candidates(request)
        if (version := python_version(path)) and same_release(request, version)
    ]
    if matches:
        return max(matches, key=lambda match: _release(match[1]))
    raise PythonNotFound(
        f"no Python {request} on this machine (looked at the build's own Python "
        f"{platform_version()}, at what `uv python find {request}` finds and in {_pyenv_root() / 'versions'}); "
        f"install one (`uv python install {request}` or `pyenv install {request}`), "
        f"or name a Python this machine has"
    )


def platform_version():
    return ".".join(map(str, sys.version_info[:3]))


def entry_python(request, where=None):
    """(path, version) of the environment's interpreter: the one its entry
    names, or the build's own when it names none. `where`: the entry's line
    in the config, for the error."""
    if not request:
        return sys.executable, platform_version()
    try:
        return find_python(request)
    except PythonNotFound as exc:
        raise PythonNotFound(f"{where + ': ' if where else ''}{exc}") from None


# ---- lock: resolve without installing -----------------------------------------------


def lock(label, pins, out, python=None, where=None):
    """Resolve pins + the project's requirements into a lock file for the
    entry's Python, or fail saying which pin the index cannot satisfy, or
    that this machine has no such Python (naming the entry's line, `where`)."""
    settings = pip_settings()
    try:
        interpreter, version = entry_python(python, where)
    except PythonNotFound as exc:
        log.error(f"matrix environment {label!r}: {exc}; nothing was installed.")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        wanted = Path(tmp) / "requirements.in"
        wanted.write_text("\n".join([*pins, *PROJECT_REQUIREMENTS]) + "\n", encoding="utf-8")
        # Resolved for that interpreter: wheels are per Python version (cp313).
        command = [
            uv_executable(),
            "pip",
            "compile",
            str(wanted),
            "--python",
            interpreter,
            "--no-header",
            "--no-annotate",
            "--quiet",
            *uv_source_flags(settings),
        ]
        log.info("$ " + shlex.join(command))
        done = subprocess.run(command, capture_output=True, text=True, env=uv_environ(settings))
    if done.returncode != 0:
        sources = " ".join(["PyPI" if "index-url" not in settings else "", *uv_source_flags(settings)[2:]]).strip()
        reason = "\n    ".join(line for line in done.stderr.strip().splitlines() if line.strip())
        log.error(
            f"matrix environment {label!r}: its pins {', '.join(pins)} cannot be resolved "
            f"(package sources: {sources}); nothing was installed.\n    {reason}\n"
            f"Fix the pin in the matrix: section of the config (pip index versions NAME lists what exists)."
        )
        return 1
    write_text_atomic(out, f"# {label}: {' '.join(pins)} (Python {version})\n" + done.stdout)
    return 0


# ---- install: the venv, recorded ---------------------------------------------------


def _run_logged(command, log_file, env):
    log_file.write("$ " + shlex.join(command) + "\n")
    log_file.flush()
    return subprocess.run(command, stdout=log_file, stderr=subprocess.STDOUT, text=True, env=env).returncode


def install(label, lock_file, venv, out, log_path, project=".", python_request=None, warm=()):
    """Make the venv, with the entry's Python (`python_request`, else the
    build's own), from the lock file and the project; compile the bytecode
    of the libraries `warm` names (the experiments' imports: warm_up); write
    what it got (uv pip freeze, the venv's Python version, what warm_up did)
    or that it failed, never raise for an install error."""
    settings = pip_settings()
    uv, env = uv_executable(), uv_environ(settings)
    venv, python = Path(venv), Path(venv) / "bin" / "python"
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    record = {
        "label": label,
        "lock": str(lock_file),
        "venv": str(venv),
        "log": str(log_path),
        "python_requested": python_request,
    }
    try:
        interpreter, _ = entry_python(python_request)
    except PythonNotFound as exc:  # gone since the lock found it: recorded like any failed install
        Path(log_path).write_text(f"{exc}\n", encoding="utf-8")
        log.warning(f"matrix environment {label!r} did not install: {exc}")
        write_json(out, {**record, "installed": False, "error": str(exc)})
        return 0
    steps = [
        [uv, "venv", "--python", interpreter, "--clear", str(venv)],
        # No --compile-bytecode: it compiles every file of every package
        # (5463 for torch 2.13.0 and its requirements), most of which no
        # experiment imports; warm_up below compiles those they do.
        [uv, "pip", "sync", str(lock_file), "--python", str(python), *uv_source_flags(settings)],
        # --no-deps: the lock already holds every requirement; editable, so the
        # experiments run the working tree's code, as the main build does.
        [
            uv,
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "-e",
            str(project),
            "--python",
            str(python),
            *uv_source_flags(settings),
        ],
    ]
    with open(log_path, "w", encoding="utf-8") as log_file:
        for step in steps:
            if _run_logged(step, log_file, env) != 0:
                log_file.close()
                tail = Path(log_path).read_text(encoding="utf-8").strip().splitlines()[-3:]
                log.warning(f"matrix environment {label!r} did not install; see {log_path}")
                write_json(out, {**record, "installed": False, "error": "\n".join(tail)})
                return 0
        record["warm_up"] = warm_up(python, warm, log_file)
        if record["warm_up"]["failed"]:
            log.warning(
                f"matrix environment {label!r}: {', '.join(record['warm_up']['failed'])} did not import "
                f"at install (their bytecode is not compiled); see {log_path}"
            )
        freeze = subprocess.run(
            [uv, "pip", "freeze", "--python", str(python)], capture_output=True, text=True, env=env, check=True
        ).stdout
    packages = [line for line in freeze.splitlines() if line and not line.startswith("-e ")]
    # the version the environment runs, asked of its own interpreter
    write_json(
        out,
        {
            **record,
            "installed": True,
            "python": str(python),
            "python_version": python_version(python),
            "freeze": packages,
        },
    )
    return 0


# ---- warm_up: the bytecode the experiments will read ---------------------------------


def warm_up(python, modules, log_file):
    """Import `modules` (the libraries the experiments import; those not
    installed here are skipped) and their requirements once with the venv's
    Python, bytecode writing allowed (warmup.py), so that the modules the
    experiments import have their .pyc in the venv, written at install,
    where Snakemake runs. Where Python may not cache what it compiles
    (PYTHONDONTWRITEBYTECODE=1, a read-only shared filesystem on a cluster's
    nodes), each cell would otherwise compile the torch modules it imports
    on every run: about 3.5 s of CPU per job. uv's --compile-bytecode gave
    the same guarantee by compiling every file of every package (5463 for
    torch 2.13.0 and its requirements, about 90% of an install's time);
    this compiles the third of them that importing reaches.

    Returns what it did ({"imported", "not_installed", "failed"}); a module
    that fails to import fails nothing here: it is logged and recorded, and
    each cell that imports it reports its own error, as without the warm-up."""
    with tempfile.TemporaryDirectory() as tmp:
        done = Path(tmp) / "warm_up.json"
        # -I: Python ignores PYTHONDONTWRITEBYTECODE and PYTHONPYCACHEPREFIX
        # (the .pyc must land beside the sources, where the cells look) and
        # PYTHONPATH (the venv's own packages only, as the cells get).
        command = [str(python), "-I", str(WARM_UP), str(done), *modules]
        status = _run_logged(command, log_file, dict(os.environ))
        if done.exists():
            return read_json(done)
    return {"imported": [], "not_installed": [], "failed": {"(warm-up)": f"exited with status {status}"}}


# ---- run: one experiment in one environment ----------------------------------------


def run_experiment(environment, experiment, params, out, log_path=None, libraries=(), limits=()):
    """Run experiments/<experiment>.py with the environment's Python and the
    main build's params; or record that its environment did not install.
    limits: the script's own flags for what the job got (`--mem-mb M
    --runtime MIN`), which it checks its footprint against."""
    record = read_json(environment)
    if not record["installed"]:
        write_json(
            out,
            {
                "experiment": experiment,
                "not_run": True,
                "log": record["log"],
                "reason": f"environment {record['label']} did not install",
            },
        )
        return 0
    log_path = log_path or f"{out}.log"
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # The exact params of the main rule, as the script's own --config file.
        config_file = Path(tmp) / "params.yaml"
        config_file.write_text(yaml.safe_dump({experiment: params}), encoding="utf-8")
        command = [
            record["python"],
            "-m",
            f"experiments.{experiment}",
            "--config",
            str(config_file),
            *limits,
            "--json",
            str(out),
            # the versions the columns compare, recorded in each artifact
            *(f"--library={name}" for name in libraries),
        ]
        # The venv's own packages only: nothing of the main environment leaks in.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        with open(log_path, "w", encoding="utf-8") as log_file:
            status = _run_logged(command, log_file, env)
    if status != 0:
        # A crash under another version is a finding, not a broken build:
        # recorded, and the matrix names the log.
        Path(out).unlink(missing_ok=True)
        log.warning(f"matrix environment {record['label']!r}: experiments/{experiment}.py failed; see {log_path}")
        write_json(
            out,
            {
                "experiment": experiment,
                "not_run": True,
                "log": str(log_path),
                "reason": f"experiments/{experiment}.py exited with status {status}",
            },
        )
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m articlekit.review.matrixenv", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("lock", help="resolve an environment's pins, install nothing")
    p.add_argument("--label", required=True)
    p.add_argument("--pin", action="append", required=True)
    p.add_argument("--python", help="the Python the entry names ('3.13'); the build's own without it")
    p.add_argument("--where", help="the entry's python: line in the config ('config.yaml:57'), for an error")
    p.add_argument("--out", required=True)
    p = sub.add_parser("install", help="build the venv from a lock file and record what it got")
    p.add_argument("--label", required=True)
    p.add_argument("--lock", required=True)
    p.add_argument("--python", help="the Python the entry names ('3.13'); the build's own without it")
    p.add_argument("--venv", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--log", required=True)
    p.add_argument(
        "--warm",
        action="append",
        default=[],
        metavar="MODULE",
        help="a library the experiments import, whose bytecode the install compiles (those not installed are skipped)",
    )
    p = sub.add_parser("run", help="run one experiment in one environment")
    p.add_argument("--environment", required=True)
    p.add_argument("--experiment", required=True)
    p.add_argument("--params", required=True, help="the experiment's params as JSON")
    p.add_argument("--threads", type=int, help="the cores the job got, for an experiment that takes every core")
    p.add_argument("--mem-mb", help="the memory the job got (MB), passed to the script, which checks its sizes")
    p.add_argument("--runtime", help="the time the job got (minutes), likewise")
    p.add_argument("--out", required=True)
    p.add_argument("--log")
    p.add_argument(
        "--library",
        action="append",
        default=[],
        metavar="DIST",
        help="a library whose version the artifact records (as the main build's rule passes)",
    )
    args = parser.parse_args(argv)
    try:
        return _dispatch(args)
    except FileNotFoundError as exc:
        log.error(f"matrix: {exc}")
        return 1


def _dispatch(args):
    if args.command == "lock":
        return lock(args.label, args.pin, args.out, args.python, args.where)
    if args.command == "install":
        return install(args.label, args.lock, args.venv, args.out, args.log, python_request=args.python, warm=args.warm)
    params = json.loads(args.params)
    if args.threads is not None:
        params["threads"] = args.threads
    limits = [
        arg
        for flag, value in (("--mem-mb", args.mem_mb), ("--runtime", args.runtime))
        if value is not None
        for arg in (flag, value)
    ]
    return run_experiment(args.environment, args.experiment, params, args.out, args.log, args.library, limits)


if __name__ == "__main__":
    sys.exit(run_command("matrixenv", main, sys.argv[1:]))
