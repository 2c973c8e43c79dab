"""Running an experiment: what an article's experiment scripts import.

Owns: the artifact envelope that every results/<name>.json is (artifacts:
written atomically, read back strictly), the command-line adapter
`run_experiment`, figures without timestamps, what an experiment declares
and what the config gives it (declared: its script's PARAMETERS and
RESULT_KEYS, read without importing it; a parameter or figure it lacks, a
declared figure plot() did not write, each named with the fix), the size
check before work (footprint), measured values with an interval: the
interleaved, thread-limited timing protocol (measure), the seed sweep's
runner, many seeds of one experiment in one process (sweep), and the
empty working folder an experiment's code runs in (scratch).

May import: articlekit.core.
"""
