"""A one-word name that several speakers share (`George` beside `George Harris` and
`Mas'r George`) is given, line by line, to the one its chapter names in full nearest to
the line; where the chapter names neither, or names both in one breath, it stays the short
name. Either way the line is marked for checking. Text written for these tests."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story

SHARED = "a name several people share"

TEXT = """CHAPTER I

George Harris came to the cabin door at dusk, and Eliza ran to meet him.

"I cannot stay long," said George Harris. "The master wants me back by dark."

"Then go now, before he misses you," said Eliza.

"I will come back for you and the boy," said George.

Eliza watched him walk down the lane until the trees hid him.

CHAPTER II

Young Mas'r George sat by the fire in Aunt Chloe's cabin, watching the skillet.

"Is the cake done yet?" said Mas'r George.

"Not yet, honey," said Aunt Chloe.

"Then I can wait a little," said George.

CHAPTER III

The rain came down all night on the river road.

"We must cross before morning," said George.

"The ice will not hold us," said Eliza.

CHAPTER IV

George Harris and Mas'r George met at the ferry, and neither knew the other.

"Is this the road to the river?" said George.

"It is, sir," said the ferryman.
"""


def line(story, words: str):
    found = [a for a in story.actions if words in a.text]
    assert len(found) == 1, found
    return found[0]


def test_a_shared_first_name_goes_to_the_one_its_chapter_names():
    story = parse_story(TEXT.encode(), "t.txt", fmt="prose")
    husband = line(story, "I will come back for you")
    boy = line(story, "Then I can wait a little")
    assert (husband.character, husband.check) == ("George Harris", SHARED)
    assert (boy.character, boy.check) == ("Mas'r George", SHARED)
    assert line(story, "I cannot stay long").check is None  # named in full: nothing to check


def test_a_chapter_that_names_neither_or_both_keeps_the_short_name():
    story = parse_story(TEXT.encode(), "t.txt", fmt="prose")
    for words in ("We must cross before morning", "Is this the road to the river"):
        found = line(story, words)
        assert (found.character, found.check) == ("George", SHARED)
    assert "George" in {c.name for c in story.characters}


def test_a_title_alone_goes_to_the_one_of_that_title_its_chapter_names():
    """`said the doctor` where the chapter names `Dr. Lanyon`: the doctor's lines are his
    (the narration's `Dr. Jekyll` makes `Henry Jekyll` a doctor too, in his own chapter); a
    sentence that ends on the title (`said the doctor. Hillyer shook…`) names no doctor."""
    text = ("CHAPTER I\n\nUtterson called on Dr. Lanyon, who sat alone over his wine.\n\n"
            '"Come in, come in," said Lanyon.\n\n'
            '"I suppose, Lanyon, we are the two oldest friends," said Utterson.\n\n'
            '"We are," said the doctor, "and I see little of Henry Jekyll now."\n\n'
            "CHAPTER II\n\nA fortnight later Dr. Jekyll gave one of his dinners.\n\n"
            '"You are very good," said Henry Jekyll to his guests.\n\n'
            '"I know what you mean," said the doctor to Utterson.\n\n'
            "CHAPTER III\n\nHillyer came in late.\n\n"
            '"Where have you been?" said the doctor. Hillyer shook his head.\n\n'
            '"Far," said Hillyer.\n')
    story = parse_story(text.encode(), "t.txt", fmt="prose")
    assert line(story, "and I see little").character == "Lanyon"
    assert line(story, "I know what you mean").character == "Henry Jekyll"
    assert line(story, "Where have you been").character == "Doctor"
