"""The Markdown copy of a result table: a cell's text never breaks the table's structure (a `|`
would end the cell, a newline the row) and its HTML is text, not markup."""

from __future__ import annotations

import polars as pl
from markdown_it import MarkdownIt

from spudflow.core.artifacts import F64, STR, col
from spudflow.core.contract import Artifact
from spudflow.core.tables import write_table

SENTENCE = "a | b\nnew line <b>bold</b> & more"
SENTENCES = Artifact("sentences_table", "test", columns=(
    col("sentence", STR, "text"), col("a|b", STR, "a header with a bar"),
    col("score", F64, "a number", True)))


def _cells(html: str, tag: str) -> list[str]:
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.cells: list[list[str]] = []
            self.inside = False

        def handle_starttag(self, name, attrs):
            if name == tag:
                self.inside = True
                self.cells.append([])
            elif name == "br" and self.inside:
                self.cells[-1].append("\n")

        def handle_endtag(self, name):
            if name == tag:
                self.inside = False

        def handle_data(self, data):
            if self.inside:
                self.cells[-1].append(data)

    parser = Cells()
    parser.feed(html)
    return ["".join(parts).strip() for parts in parser.cells]


def test_markdown_cells_keep_bars_newlines_and_html_as_text(tmp_path):
    frame = pl.DataFrame({"sentence": [SENTENCE, "plain"], "a|b": ["x|y", "z"],
                          "score": [0.5, None]})
    paths = write_table(frame, tmp_path / "t", SENTENCES)
    text = paths["md"].read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) == 4  # header, rule, two rows: the newline did not start a row
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert _cells(html, "th") == ["sentence", "a|b", "score"]
    assert _cells(html, "td") == [SENTENCE, "x|y", "0.5", "plain", "z", "--"]
    assert "<b>" not in html  # the sentence's tag is shown, not applied
