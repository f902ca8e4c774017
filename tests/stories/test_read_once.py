"""`LastRead`: the Library's preview, import and suggestions parse an upload once, and never
hand out a stale or shared story."""

from __future__ import annotations

import os

import pytest

from bookmarks.config import load_settings
from bookmarks.errors import StoryFormatError
from bookmarks.services import Services
from bookmarks.store import Store
from bookmarks.stories.importers import load_story
from bookmarks.stories.read_once import LastRead

PROSE = ('"Come in," said Anna.\n\n"Thank you," said Boris.\n\nThey sat by the fire.\n\n'
         '"Tea?" Anna asked.\n')


def write(path, text: str):
    path.write_text(text, "utf-8")
    return path


def test_a_file_is_parsed_once_and_each_caller_gets_its_own_copy(tmp_path):
    path = write(tmp_path / "visit.txt", PROSE)
    reader = LastRead()
    first = reader.load(path)
    first.actions[0].text = "changed by the first caller"
    first.characters.clear()
    second = reader.load(path, title="  A   Visit ")
    assert reader.parsed == 1
    assert second.actions[0].text == load_story(path).actions[0].text != "changed by the first caller"
    assert {c.name for c in second.characters} >= {"Anna", "Boris"}
    assert second.title == "A Visit"
    assert reader.load(path).title == "Visit"  # the title given to one caller is not kept


def test_a_changed_file_or_another_format_is_parsed_again(tmp_path):
    path = write(tmp_path / "visit.txt", PROSE)
    reader = LastRead()
    reader.load(path)
    write(path, PROSE.replace("Boris", "Vera"))  # same size: only the time tells
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    assert "Vera" in {c.name for c in reader.load(path).characters}
    assert reader.parsed == 2
    reader.load(path, fmt="prose")  # another format asked for
    assert reader.parsed == 3
    write(tmp_path / "visit.meta.json", '{"title": "From the meta file"}')
    assert reader.load(path, fmt="prose").title == "From the meta file"
    assert reader.parsed == 4
    jsonl = write(tmp_path / "talk.jsonl", '{"character": "Anna", "text": "Tea?", "line": 2}\n')
    assert reader.load(jsonl).source is None
    write(tmp_path / "talk.source.txt", 'Anna came in.\n"Tea?" Anna asked.\n')  # its source arrives
    assert reader.load(jsonl).source == 'Anna came in.\n"Tea?" Anna asked.'
    assert reader.parsed == 6


def test_a_bad_file_is_refused_every_time_and_not_kept(tmp_path):
    path = write(tmp_path / "bad.jsonl", '{"character": "A", "action": "Hi"}\nnot json\n')
    reader = LastRead()
    for _ in range(2):
        with pytest.raises(StoryFormatError, match="line 2"):
            reader.load(path)
    assert reader.parsed == 0
    write(path, '{"character": "A", "action": "Hi"}\n')
    assert reader.load(path).actions[0].text == "Hi"


def test_only_the_last_few_are_kept(tmp_path):
    reader = LastRead(keep=2)
    paths = [write(tmp_path / f"s{i}.txt", PROSE) for i in range(3)]
    for p in paths:
        reader.load(p)
    reader.load(paths[2])
    reader.load(paths[1])
    assert reader.parsed == 3
    reader.load(paths[0])  # pushed out by the other two
    assert reader.parsed == 4


def test_the_library_import_after_its_preview_does_not_parse_again(tmp_path):
    settings = load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path / "data")})
    services = Services(settings=settings, store=Store(settings.db_path), llms={})
    path = write(tmp_path / "visit.txt", PROSE)
    services.reader.load(path, max_bytes=settings.max_upload_bytes)  # the preview
    story_id = services.import_file(path, title="The Visit")
    assert services.reader.parsed == 1
    info = services.store.story(story_id)
    assert info.title == "The Visit" and info.n_actions == len(load_story(path).actions)
