"""Running an experiment: what an article's experiment scripts import.

Owns: the artifact envelope that every results/<name>.json is (artifacts:
written atomically, read back strictly), the command-line adapter
`run_experiment`, figures without timestamps, the size check before
work (footprint), and the seed sweep's runner, many seeds of one
experiment in one process (sweep).

May import: articlekit.core.
"""
