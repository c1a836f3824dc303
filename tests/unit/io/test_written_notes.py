"""Notes of the sealed files a process wrote whole (zigzag/io/written_notes.py): a notes file is
read in one parse when every line is whole, line by line otherwise, with the same notes."""

from __future__ import annotations

import json

from zigzag.io.written_notes import NOTES, read_notes


def _notes(cache, text: str) -> dict:
    folder = cache / NOTES
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "1.jsonl").write_text(text)
    return read_notes(cache)[0]


def test_whole_lines_are_read_at_once_and_the_last_note_wins(tmp_path):
    lines = [json.dumps([f"/r/{i % 3}.json", [i, 2, 3, 4]]) for i in range(5)]
    assert _notes(tmp_path, "\n".join(lines) + "\n") == {
        "/r/0.json": [3, 2, 3, 4],
        "/r/1.json": [4, 2, 3, 4],
        "/r/2.json": [2, 2, 3, 4],
    }


def test_a_torn_or_odd_line_leaves_the_others(tmp_path):
    whole = json.dumps(["/r/a.json", [1, 2, 3, 4]])
    text = "\n".join(
        [
            whole,
            '["/r/b.json", [1, 2',  # torn: cut short by a killed writer
            '"ab"',  # two characters, not a note
            '["/r/c.json", [5]], ["/r/d.json", [6]]',  # two notes on one line: not a line's note
            "",
            json.dumps(["/r/e.json", [7, 8, 9, 10]]),
        ]
    )
    assert _notes(tmp_path, text) == {"/r/a.json": [1, 2, 3, 4], "/r/e.json": [7, 8, 9, 10]}
    # the two notes on one line would parse as a whole file of whole lines: counted, not taken
    assert _notes(tmp_path, '["/r/c.json", [5]], ["/r/d.json", [6]]\n') == {}
