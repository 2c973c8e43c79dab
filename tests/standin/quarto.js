#!/usr/bin/env python3
"""A stand-in for the Quarto process a project script runs under, for unit
tests of the pre-render (tests/test_quarto_hooks.py): started as

    python tests/standin/quarto.js COMMAND SCRIPT [ARGS...]

its command line reads as Quarto's (`.../quarto.js preview ...`: the
launcher's entry script, then the Quarto command), and it runs SCRIPT as
Quarto runs a pre-render: a child process, its exit status passed on.
"""

import subprocess
import sys

sys.exit(subprocess.run(sys.argv[2:]).returncode)
