"""Running the renderers' external tools (Pandoc, Quarto) and reading
their errors: run_tool stops a render with the tool's own message (a Lua
filter's, without its traceback: tool_error), a citation it does not know,
or math it could not convert (bad_math), each named by the article's line.
"""

import re
import subprocess
from pathlib import Path

from articlekit.core.jsonio import DiskFull
from articlekit.core.log import log
from articlekit.render.checks import line_of
from articlekit.render.citations import unknown_citation
from articlekit.render.renderers import RenderError


# A Lua filter's error, as Pandoc and Quarto both print it: the message sits
# between "Error running filter FILE:" and the traceback.
FILTER_ERROR = re.compile(r"Error running filter [^\n]*:\n(?:[^\n]*?\.lua:\d+: )?(.*?)\n(?:stack traceback:|$)", re.S)


def tool_error(stderr):
    """The one message that says what went wrong: a Lua filter's own message
    when there is one (not the traceback under it), else the whole output."""
    found = FILTER_ERROR.search(stderr)
    return found.group(1).strip() if found else stderr.strip()


# Pandoc's warning for math it cannot convert, which it leaves as TeX: the
# math and the parser's complaint (the line under the caret).
_BAD_MATH = re.compile(r"Could not convert TeX math (.*?), rendering as TeX:\n(?:[^\n]*\n){2}\s*([^\n]*)", re.S)


def bad_math(stderr):
    """[(tex, why)] for each formula Pandoc said it could not convert."""
    return [(tex.strip(), why.strip()) for tex, why in _BAD_MATH.findall(stderr)]


def run_tool(cmd, article, cwd=None, env=None):
    """Run a renderer's command; a failure stops with the tool's own message.
    env: its environment, when not this process's (the Word edition's epoch)."""
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode != 0 and "No space left on device" in done.stderr:
        raise DiskFull(cmd[cmd.index("--output") + 1])  # the tool's own backtrace adds nothing to that
    if done.returncode != 0:
        raise RenderError(f"{article}: {Path(cmd[0]).name} failed (exit {done.returncode}): {tool_error(done.stderr)}")
    unknown = unknown_citation(done.stderr, article)
    if unknown is not None:
        raise unknown
    math = bad_math(done.stderr)
    if math:
        tex, why = math[0]
        raise RenderError(
            f"{line_of(article, tex)}the math ${tex}$ is not TeX that {Path(cmd[0]).name} can convert "
            f"({why}): correct it{f', and {len(math) - 1} more' if len(math) > 1 else ''}"
        )
    if done.stderr.strip():
        log.warning(done.stderr.rstrip())
    # Pandoc only warns when a figure is missing; the article must not ship without it.
    missing = [line for line in done.stderr.splitlines() if "Could not fetch resource" in line]
    if missing:
        raise RenderError("missing resource(s): " + "; ".join(missing))
