"""Importers: each format, sidecars, and bad input with line-numbered errors."""

from __future__ import annotations

import json

import pytest

from bookmarks.errors import StoryFormatError
from bookmarks.stories.importers import detect_format, load_story, parse_story
from bookmarks.stories.names import normalize_name
from tests.conftest import STORIES


def parse(text: str, name: str = "story.txt", **kw):
    return parse_story(text.encode(), name, **kw)


def test_jsonl_basic_and_normalised_names():
    story = parse('{"character": "ANNA.", "text": "Hello.", "chapter": "One"}\n'
                  '{"character": "narration", "text": "Rain falls."}\n'
                  '{"character": "Anna", "text": "Again."}\n', "s.jsonl")
    assert [a.character for a in story.actions] == ["Anna", "narration", "Anna"]
    assert story.actions[0].chapter == "One" and story.actions[2].index == 3
    assert [c.name for c in story.characters] == ["Anna"]


@pytest.mark.parametrize("line,reason", [
    ('{"character": "A", "text": "x"', "not valid JSON"),
    ('["A", "x"]', "JSON object"),
    ('{"character": "A"}', '"character" and "text"'),
    ('{"character": "A", "text": 5}', '"text" must be a string'),
    ('{"character": "A", "text": "   "}', '"text" is empty'),
])
def test_jsonl_errors_name_the_line(line, reason):
    text = '{"character": "A", "text": "fine"}\n\n' + line + "\n"
    with pytest.raises(StoryFormatError) as err:
        parse(text, "bad.jsonl")
    assert err.value.line == 3 and "bad.jsonl, line 3" in str(err.value)
    assert reason in str(err.value)


def test_script_colon_style_headings_and_directions():
    story = parse("## Scene 1: Dock\n[Rain.]\nMARA: Where is the boat?\n\n"
                  "TOBIAS BELL (quietly): Gone.\n(A horn sounds.)\n## Scene 2\nMara: Then we swim.\n")
    assert [(a.character, a.chapter) for a in story.actions] == [
        ("narration", "Scene 1: Dock"), ("Mara", "Scene 1: Dock"),
        ("Tobias Bell", "Scene 1: Dock"), ("narration", "Scene 1: Dock"), ("Mara", "Scene 2")]
    assert story.actions[2].text == "Gone."


def test_script_printed_play_style():
    story = parse("# Act I\n\nHAMLIN.\nThe night is cold,\nand I am tired.\n\nOSRIC.\nThen sleep.\n"
                  "Sleep well.\n\n_Exit Osric._\n")
    assert [(a.character, a.text) for a in story.actions] == [
        ("Hamlin", "The night is cold, and I am tired."), ("Osric", "Then sleep. Sleep well."),
        ("narration", "Exit Osric.")]


def test_script_error_names_line():
    with pytest.raises(StoryFormatError, match=r"play.txt, line 3: expected"):
        parse("MARA: hi\nTOBIAS: hello\nthis line has no speaker at all and goes on\n", "play.txt",
              fmt="script")


def test_prose_attributes_quoted_dialogue():
    story = parse("Chapter 1\n\nThe inn was quiet when the stranger came in out of the storm, "
                  "shaking rain from a heavy grey cloak.\n\n"
                  '"We are closed," said Marta.\n\n'
                  'Jonas looked up. "Let him stay," Jonas said.\n\n'
                  '"Who are you?" she asked.\n', "tale.txt")
    # the beat "Jonas looked up." stays as narration; "she asked" is Marta, the one woman of
    # the exchange (the old reader left it narration and dropped the beat)
    assert [a.character for a in story.actions] == ["narration", "Marta", "narration", "Jonas",
                                                    "Marta"]
    assert story.actions[1].text == "We are closed."  # the tag's comma ends the sentence
    assert story.actions[0].chapter == "Chapter 1"


def test_a_chapter_title_under_its_heading_names_the_chapter():
    """`CHAPTER III` ¶ `The Husband and Father`: the title line is the chapter's name, not a
    line of narration (whose `Husband` a reader of presence would put on stage). A sentence
    is no title."""
    story = parse("CHAPTER III\n\nThe Husband and Father\n\n"
                  "Eliza stood in the verandah when a hand was laid on her shoulder.\n\n"
                  '"George, is it you?" said Eliza.\n\n'
                  "CHAPTER IV\n\nIt was dark.\n\nThe cabin was warm and the fire was bright.\n",
                  "tale.txt", fmt="prose")
    assert [(a.text[:12], a.chapter) for a in story.actions] == [
        ("Eliza stood ", "CHAPTER III: The Husband and Father"),
        ("George, is i", "CHAPTER III: The Husband and Father"),
        ("It was dark.", "CHAPTER IV"), ("The cabin wa", "CHAPTER IV")]
    caps = parse("CHAPTER I.\n\nTHE STRANGE MAN'S ARRIVAL\n\nThe stranger came early.\n",
                 "man.txt", fmt="prose")
    assert caps.actions[0].chapter == "CHAPTER I: The Strange Man's Arrival"


def test_title_by_line_and_capital_headings_of_a_text_without_chapter_headings():
    """`The Strange Case` ¶ `by R. L. S.` name the story (no narration); with no `Chapter …`
    heading, a short line in capitals alone (`STORY OF THE DOOR`) heads a chapter, but a
    shout is no heading."""
    story = parse("The Strange Case\n\nby R. L. S.\n\nSTORY OF THE DOOR\n\n"
                  "Mr. Utterson walked with his cousin along a by-street in the east.\n\n"
                  "HELP!\n\nSEARCH FOR MR. HYDE\n\n"
                  '"I shall be Mr. Seek," said Mr. Utterson.\n', "case.txt", fmt="prose")
    assert (story.title, story.author) == ("The Strange Case", "R. L. S.")
    assert [(a.text[:10], a.chapter) for a in story.actions] == [
        ("Mr. Utters", "Story of the Door"), ("HELP!", "Story of the Door"),
        ("I shall be", "Search for Mr. Hyde")]
    titled = parse("CHAPTER I\n\nTom walked home.\n\nTHE END\n", "t.txt", fmt="prose")
    assert [a.text for a in titled.actions] == ["Tom walked home.", "THE END"]  # headed already


def test_a_heading_is_its_word_and_a_number_not_a_sentence_that_opens_on_the_word():
    story = parse("VOLUME I\n\nStave One: The Lamp\n\nPart of the crowd ran to the quay.\n\n"
                  "Book after book lay open on the floor.\n\nCHAPTER 2 The Quay\n\nIt rained.\n",
                  "tale.txt", fmt="prose")
    assert [(a.text, a.chapter) for a in story.actions] == [
        ("Part of the crowd ran to the quay.", "Stave One: The Lamp"),
        ("Book after book lay open on the floor.", "Stave One: The Lamp"),
        ("It rained.", "CHAPTER 2 The Quay")]


def test_a_title_page_and_numbered_titles():
    """A subtitle between title and by-line and a year after it are the title page; `IV. A
    CLUE.` heads chapter `IV: A Clue`; `I` ¶ `"WE ARE SEVEN"` heads `I: We Are Seven`; a story
    that opens on its title in quotes (`"IN AMBUSH."`) is headed by it."""
    story = parse("THE LANTERN CASE\n\nA LAWYER’S STORY\n\nBy Iris Penhallow\n\n1891\n\n"
                  "IV. A CLUE.\n\nTom found the key.\n\nV. \"WHEN YOU CALL, COME!\"\n\n"
                  "Anna came.\n", "case.txt", fmt="prose")
    assert (story.title, story.author) == ("The Lantern Case", "Iris Penhallow")  # not in capitals
    assert [(a.text, a.chapter) for a in story.actions] == [
        ("Tom found the key.", "IV: A Clue"), ("Anna came.", "V: When You Call, Come!")]
    seven = parse("Stalky & Co.\n\nby Iris Penhallow\n\nI\n\n\"WE ARE SEVEN\"\n\nTom ran.\n\n"
                  "II\n\nAnna ran.\n", "seven.txt", fmt="prose")
    assert seven.title == "Stalky & Co."
    assert [(a.text, a.chapter) for a in seven.actions] == [("Tom ran.", "I: We Are Seven"),
                                                            ("Anna ran.", "II")]
    ambush = parse('"IN AMBUSH."\n\nIn summer the boys built huts.\n', "a.txt", fmt="prose")
    assert [(a.text, a.chapter) for a in ambush.actions] == [("In summer the boys built huts.",
                                                              "In Ambush")]


def test_numbered_sections_of_a_chapter_and_numbered_chapters():
    """`CHAPTER I` ¶ `I` ¶ … ¶ `II`: a section's number alone is no chapter title and no
    narration but the chapter's next section (`CHAPTER I §II`, a new scene for presence);
    in a text without `Chapter` headings, `2` ¶ `THE HEAVY CHEST` heads chapter `2: The
    Heavy Chest`; a title that ends on `!` still names the story."""
    story = parse("CHAPTER I\n\nI\n\nTom walked home.\n\nII.\n\nAnna was at the gate.\n\n"
                  "CHAPTER II\n\nThe Gate\n\nIII\n\nIt rained.\n", "tale.txt", fmt="prose")
    assert [(a.text, a.chapter) for a in story.actions] == [
        ("Tom walked home.", "CHAPTER I §I"), ("Anna was at the gate.", "CHAPTER I §II"),
        ("It rained.", "CHAPTER II: The Gate §III")]
    plain = parse("Westward Ho!\n\nby Iris Penhallow\n\n2\n\nTHE HEAVY CHEST\n\nTom lifted "
                  "it.\n\n3\n\nBEAUTY AND THE BEAST\n\nAnna sang.\n\nV.\n\nIt rained.\n",
                  "ho.txt", fmt="prose")
    assert (plain.title, plain.author) == ("Westward Ho!", "Iris Penhallow")
    assert [(a.text, a.chapter) for a in plain.actions] == [
        ("Tom lifted it.", "2: The Heavy Chest"), ("Anna sang.", "3: Beauty and the Beast"),
        ("It rained.", "V")]
    gutenberg = parse("*** START OF THE PROJECT GUTENBERG EBOOK TALE ***\n\nCHAPTER I\n\nI\n\n"
                      "Tom walked home along the river, as he did every evening of that year.\n\nII\n\n"
                      "Anna was at the gate, waiting for him in the dusk.\n\n"
                      "*** END OF THE PROJECT GUTENBERG EBOOK TALE ***\n", "g.txt")
    assert [a.chapter for a in gutenberg.actions] == ["Chapter I §I", "Chapter I §II"]


def test_reference_format_with_multiple_characters():
    data = {"Chapter 1": [{"action": "I am here.", "character": "Hamlin"},
                          {"action": "They bow.", "characters": ["Hamlin", "Osric"]}],
            "Chapter 2": [{"action": "Gone.", "character": "Osric"}]}
    story = parse(json.dumps(data), "ref.json")
    assert story.source_format == "reference"
    assert [(a.character, a.chapter) for a in story.actions] == [
        ("Hamlin", "Chapter 1"), ("narration", "Chapter 1"), ("Osric", "Chapter 2")]
    assert story.actions[1].text.startswith("[Hamlin, Osric]")


def test_detect_format():
    assert detect_format(['{"character": "a", "text": "b"}'], "x.txt") == "jsonl"
    assert detect_format(["{", '"c": []', "}"], "x.json") == "reference"
    assert detect_format(["A: hi", "B: ho", "[pause]"], "x.txt") == "script"
    assert detect_format(["It was a dark night and nobody came."], "x.txt") == "prose"


def test_normalize_name():
    assert normalize_name("  LADY  MACBETH. ") == "Lady Macbeth"
    assert normalize_name("Narration") == "narration"
    assert normalize_name("Dr. Watson:") == "Dr. Watson"


@pytest.mark.parametrize("data,reason", [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
    ("Caf\u00e9: bonjour\n".encode("latin-1"), "not UTF-8"),
])
def test_bad_bytes(data, reason):
    with pytest.raises(StoryFormatError, match=reason):
        parse_story(data, "upload.txt")


def test_wrong_encoding_names_line():
    data = b"A: fine\nB: fine\nC: caf\xe9\n"
    with pytest.raises(StoryFormatError) as err:
        parse_story(data, "latin.txt")
    assert err.value.line == 3


def test_unknown_format():
    with pytest.raises(StoryFormatError, match="unknown format 'yaml'"):
        parse("A: hi", fmt="yaml")


def test_fifty_megabyte_file_is_refused(tmp_path):
    big = tmp_path / "huge.jsonl"
    with big.open("wb") as f:
        f.truncate(50 * 1024 * 1024)
    with pytest.raises(StoryFormatError, match=r"52\.4 MB; the limit is 21\.0 MB"):
        load_story(big)
    with pytest.raises(StoryFormatError, match="limit"):
        parse_story(b"x" * (50 * 1024 * 1024), "huge.txt")


def test_deeply_nested_json_is_a_clear_error():
    with pytest.raises(StoryFormatError):
        parse("[" * 100_000 + "]" * 100_000, "deep.json")


def test_meta_sidecar_maps_aliases_to_canonical(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"character": "mags", "text": "hi"}\n'
                                      '{"character": "Tobias", "text": "yo"}\n')
    (tmp_path / "s.meta.json").write_text(json.dumps({
        "title": "Test", "characters": [{"name": "Marguerite", "aliases": ["Mags"], "major": True}]}))
    story = load_story(tmp_path / "s.jsonl")
    assert story.title == "Test"
    assert [a.character for a in story.actions] == ["Marguerite", "Tobias"]
    assert [(c.name, c.major) for c in story.characters] == [("Marguerite", True), ("Tobias", False)]


@pytest.mark.parametrize("path", sorted(p for p in STORIES.iterdir()
                                        if p.suffix in (".jsonl", ".txt") and p.name.count(".") == 1)
                         if STORIES.is_dir() else [])
def test_bundled_stories_import(path):
    story = load_story(path)
    assert len(story.actions) >= 100
    majors = [c for c in story.characters if c.major]
    assert len(majors) >= 2
    cast = {c.name for c in story.characters}
    assert {a.character for a in story.actions} <= cast | {"narration"}


def test_edge_cases_are_handled():
    # control characters are dropped from text; duplicate names in other cases merge
    story = parse('{"character": "ANNA", "text": "Hi\\u0007 there\\u0000."}\n'
                  '{"character": "anna.", "text": "Again."}\n', "c.jsonl")
    assert story.actions[0].text == "Hi there." and [c.name for c in story.characters] == ["Anna"]
    # a story with only narration, or one character, imports (a scene then needs a cast)
    assert parse("[Rain.]\n[Wind.]\n", "n.txt").characters == []
    assert [c.name for c in parse("SOLO: Alone.\n[Rain.]\n", "s.txt").characters] == ["Solo"]
    # very long lines are refused with the line number
    with pytest.raises(StoryFormatError, match=r"long.txt, line 2: .*20000"):
        parse("A: short\nB: " + "x" * 20_001 + "\n", "long.txt")


def test_a_question_without_a_story_point_is_asked_at_the_end(tmp_path):
    from bookmarks.stories.importers import load_story

    (tmp_path / "s.jsonl").write_text('{"character": "A", "text": "One."}\n'
                                      '{"character": "B", "text": "Two."}\n')
    (tmp_path / "s.questions.jsonl").write_text(
        '{"id": "q1", "question": "Who spoke last?", "options": {"A": "A", "B": "B"}, '
        '"answer": "B"}\n')
    story = load_story(tmp_path / "s.jsonl")
    assert story.questions[0].after == 2


def test_a_group_speaker_is_never_a_major_character():
    from bookmarks.stories.importers import parse_story

    lines = "\n".join(["ALL: Long live the king!", "HAMLIN: Quiet.", "ALL: Long live him!",
                       "ALL: Again!", "HAMLIN: I said quiet.", "ALL: Never!", "HAMLIN: Fine."])
    story = parse_story(lines.encode(), "crowd.txt")
    major = {c.name for c in story.characters if c.major}
    assert "Hamlin" in major and not any(n.casefold() == "all" for n in major)


def test_a_prose_text_that_opens_with_its_title_and_by_line_names_itself():
    text = ("The Lamp Lighter\n\nby A. N. Writer\n\n\n\nCHAPTER I\n\n"
            "The lamps were lit early that winter.\n\n"
            '"Is it late?" asked Mrs. Hale.\n\n"Not yet," said Mr. Crowe.\n')
    story = parse_story(text.encode(), "lamp_lighter_draft.txt", fmt="prose")
    assert (story.title, story.author) == ("The Lamp Lighter", "A. N. Writer")
    plain = parse_story(text.split("CHAPTER I\n\n", 1)[1].encode(), "lamp_lighter_draft.txt",
                        fmt="prose")
    assert (plain.title, plain.author) == ("Lamp Lighter Draft", "")  # from the file name
    given = parse_story(text.encode(), "x.txt", fmt="prose", title="My own title")
    assert given.title == "My own title"
    # the by-line on two lines, as some copies print it: `By` ¶ the name
    apart = parse_story(text.replace("by A. N. Writer", "BY\n\nAnnabel North Writer").encode(),
                        "lamp_lighter_draft.txt", fmt="prose")
    assert (apart.title, apart.author) == ("The Lamp Lighter", "Annabel North Writer")
    sentence = parse_story(text.replace("by A. N. Writer", "By\n\nThe night came down fast.")
                           .encode(), "lamp_lighter_draft.txt", fmt="prose")
    assert sentence.author == ""  # a sentence is no name
