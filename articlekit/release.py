"""Release snapshots: freeze a build under releases/<label>/ (placeholder:
only the lookup the Snakefile needs so far)."""

from pathlib import Path

from articlekit.jsonio import read_json


def latest_snapshot(releases_dir):
    """Path of the newest releases/*/snapshot.json by its released_at, or None."""
    snapshots = sorted(Path(releases_dir).glob("*/snapshot.json"))
    if not snapshots:
        return None
    return max(snapshots, key=lambda p: read_json(p).get("released_at", ""))
