"""Reviewers' outputs: the audit against the published edition, the diff
against the last release, release snapshots, and the version matrix, with
the one page writer of their reports.

Owns: the rules by which two builds agree, or a rerun came back, for keys
no agreement class governs, asking the classes (articlekit.data.classes)
for the rest (agreement), the audit (audit),
the diff (diff), recomputing one value in a scratch copy (reproduce),
releases and their snapshots (release, snapshot, snapshot_digest), the
matrix and its environments (matrix, matrixenv), the seed-robustness page
(robustness), and
report pages (pages: the Markdown blocks, and the HTML pages rendered from
templates/ with their stylesheets report.css and matrix.css; no other
module writes HTML).

May import: every stage before it (core, experiment, data, article).
"""
