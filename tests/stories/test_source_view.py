"""A line where it stands in the file: the import keeps each action's file line and the
file's text, and the Library shows the action's own paragraph (with the tag the import read)
between its neighbours (stories/source_view.py, Store.source_around)."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story
from bookmarks.stories.source_view import AFTER_LINES, BEFORE_LINES, OWN_LINES, around, render

PROSE = """The Lantern Keeper

Noon came and Abel Marsh climbed the stair with the oil can, as he
did every day, and found the girl already sitting on the top step.

"Good day to you, Wren," said Abel Marsh.

"Good day," said Wren Tallis.

"Any news from the mainland?" he asked.

"None at all," said Wren Tallis. "The boat is late again."

He set the can down beside her and looked out at the water.

"Then we wait," he said.
"""


def _prose():
    return parse_story(PROSE.encode(), "keeper.txt", fmt="prose")


def test_each_action_knows_its_file_line_and_the_story_keeps_the_file():
    story = _prose()
    lines = PROSE.split("\n")
    assert story.source == PROSE.rstrip("\n")
    asked = next(a for a in story.actions if a.text.startswith("Any news"))
    assert asked.line == 10 and lines[asked.line - 1].endswith("he asked.")
    assert "he asked" not in asked.text  # the tag is in the file, not in the line
    assert asked.character == "Abel Marsh" and asked.check  # a line to check
    for a in story.actions:
        assert a.line is not None and a.text.split()[0].strip('"“,') in lines[a.line - 1]


def test_a_scripts_lines_are_its_file_lines_and_json_keeps_no_file():
    script = parse_story(b"# One\nMARA: Hello.\nTOBIAS: Hi.\n[Rain.]\nMARA: Bye.\n", "s.txt")
    assert [a.line for a in script.actions] == [2, 3, 4, 5] and script.source is not None
    jsonl = parse_story(b'{"character": "Mara", "text": "Hello."}\n', "s.jsonl")
    assert jsonl.source is None  # JSON's own lines say nothing a writer needs


def test_around_marks_the_own_paragraph_between_its_neighbours():
    story = _prose()
    source = story.source.split("\n")
    starts = {a.index: a.line for a in story.actions}
    asked = next(a.index for a in story.actions if a.text.startswith("Any news"))
    piece = around(source, starts, asked)
    own = [text for _, text, mine in piece if mine]
    assert own == ['"Any news from the mainland?" he asked.']
    shown = [text for _, text, _ in piece]
    assert shown[0] == '"Good day," said Wren Tallis.'  # the line before it
    assert shown[-1].startswith('"None at all," said Wren Tallis.')  # the reply after it
    text = render(piece)
    assert "▶     10  \"Any news" in text and "       8  \"Good day,\" said" in text


def test_around_is_capped_and_empty_where_the_line_is_not_known():
    long_before = [f"narration line {k}" for k in range(1, 101)]  # one paragraph of 100 lines
    source = [*long_before, "", *[f"speech {k}" for k in range(1, 61)], "", "reply", "more reply"]
    starts = {1: 1, 2: 102, 3: 163}
    piece = around(source, starts, 2)
    assert sum(1 for *_, mine in piece if not mine and _[0] < 102) <= BEFORE_LINES
    assert sum(1 for *_, mine in piece if mine) == OWN_LINES
    assert [t for n, t, mine in piece if n > 101 + OWN_LINES] == []  # the own cut, no more
    assert len(around(source, starts, 3)) <= BEFORE_LINES + OWN_LINES + AFTER_LINES
    assert around(source, {1: None}, 1) == [] and around(source, {1: 999}, 1) == []
    assert around(source, {}, 1) == []


def test_the_store_keeps_lines_and_file_through_corrections_and_drops_them_with_the_story(store):
    story_id = store.add_story(_prose())
    asked = next(a for a in store.actions(story_id) if a.text.startswith("Any news"))
    assert asked.line == 10
    piece = store.source_around(story_id, asked.index)
    assert [t for _, t, mine in piece if mine] == ['"Any news from the mainland?" he asked.']
    store.correct_line(story_id, asked.index, "narration")
    assert store.actions(story_id, asked.index, asked.index)[0].line == 10  # still where it was
    assert store.source_around(story_id, asked.index) == piece
    jsonl = store.add_story(parse_story(b'{"character": "Mara", "text": "Hello."}\n', "s.jsonl"))
    assert store.source_around(jsonl, 1) == []
    store.delete_story(story_id)
    assert store.db.execute("SELECT COUNT(*) FROM story_sources").fetchone()[0] == 0


def test_a_jsonl_line_field_is_checked():
    import pytest

    from bookmarks.errors import StoryFormatError

    ok = parse_story(b'{"character": "Mara", "text": "Hello.", "line": 41}\n', "s.jsonl")
    assert ok.actions[0].line == 41
    for bad in (b'0', b'true', b'"7"', b'1.5', b'-3'):
        with pytest.raises(StoryFormatError) as caught:
            parse_story(b'{"character": "Mara", "text": "Hello."}\n'
                        b'{"character": "Mara", "text": "Bye.", "line": ' + bad + b'}\n', "s.jsonl")
        assert '"line" must be a line number' in str(caught.value) and "line 2" in str(caught.value)
