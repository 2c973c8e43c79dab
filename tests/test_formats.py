"""The formats are a registry: one module each in articlekit/render/formats/.

Nothing else lists them. The registry reads the package's modules, so a new
format is one file (and one line of config publishing.formats, which the
Plan turns into one rule: tests/test_workflow.py plants one end to end);
each module names its output, writer, filters, work folder and check.
"""

from pathlib import Path

import pytest

from articlekit.render import formats
from articlekit.render.page import remove_stale_render_folders

pytestmark = pytest.mark.unit


def test_every_module_is_a_format_named_after_its_file_and_the_default_set_has_one_each():
    assert set(formats.DEFAULT) <= set(formats.names())
    for name in formats.names():
        fmt = formats.get(name)
        assert fmt.name == name and fmt.module == f"articlekit.render.formats.{name}"
        assert fmt.output.startswith("build/") and fmt.writer and callable(fmt.write) and callable(fmt.check)
        assert all(Path(str(path)).is_file() for path in fmt.filters)


def test_no_two_formats_share_an_output_or_a_work_folder():
    every = [formats.get(name) for name in formats.names()]
    assert len({f.output for f in every}) == len(every)
    assert len({f.work_prefix for f in every}) == len(every) == len(formats.work_prefixes())


def test_an_unknown_format_is_named_with_the_formats_there_are():
    with pytest.raises(formats.UnknownFormat, match=r"no format 'odt': the formats are .*html"):
        formats.get("odt")


def test_a_killed_render_of_any_format_leaves_no_work_folder_for_long(tmp_path):
    """Each format's work folder (its prefix, its dead owner's tag) is
    cleared by the next render of any format."""
    dead = [tmp_path / f"{prefix}999999999_1-x" for prefix in formats.work_prefixes()]
    for folder in dead:
        folder.mkdir()
    remove_stale_render_folders(tmp_path)
    assert not [folder for folder in dead if folder.exists()]
