"""What `articlekit preview` counts as an edit of the article's folder
(articlekit.render.preview.Snapshot): any file an author writes there, and
not the pages Quarto's own render writes beside a text, so that an author's
`quarto render` or `quarto preview` beside it sets off no rebuild."""

from articlekit.render.preview import Snapshot


def test_an_edit_and_a_new_file_are_edits(tmp_path):
    (tmp_path / "index.qmd").write_text("first\n", encoding="utf-8")
    snapshot = Snapshot([tmp_path])
    (tmp_path / "index.qmd").write_text("second\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("a note\n", encoding="utf-8")
    assert snapshot.changed() == [str(tmp_path / "index.qmd"), str(tmp_path / "notes.md")]
    assert snapshot.changed() == []


def test_the_pages_quarto_writes_beside_a_text_are_not(tmp_path):
    (tmp_path / "index.qmd").write_text("text\n", encoding="utf-8")
    snapshot = Snapshot([tmp_path])
    for page in ("index.html", "index.md", "index.docx", "index_files/libs/quarto.js"):
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text("written by Quarto\n", encoding="utf-8")
    assert snapshot.changed() == []
    # a page's name beside no text is the author's file
    (tmp_path / "other.html").write_text("an author's page\n", encoding="utf-8")
    assert snapshot.changed() == [str(tmp_path / "other.html")]
