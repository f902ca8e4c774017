"""An illustrated edition's pictures, footnotes and side-notes are no part of the story: a
bracketed block over several paragraphs (caption, copyright line, even the chapter's
decorated heading) leaves no narration and no speech, and the heading inside still names
the chapter. Text written for these tests."""

from __future__ import annotations

from bookmarks.stories.illustrations import blank_illustrations
from bookmarks.stories.importers import parse_story

TALE = """THE LANTERN AT HOLLOW END

by Iris Penhallow



[Illustration: ·THE LANTERN AT HOLLOW END·




Chapter I.]


Wenna lit the lantern at dusk, as she had every evening that winter.

"Is it lit?" asked Davey from the door.

[Illustration:

"She held it up to the glass"

[_Copyright 1931 by the Gullet Press._]]

"It is lit," said Wenna.

[Footnote 1: The lantern was an old ship's lamp.]

[Illustration]

CHAPTER II.

[Sidenote: The next morning.]

Davey came back at noon with the post.
"""

GUTENBERG = ("The Project Gutenberg eBook of The Lantern at Hollow End\n\nTitle: The Lantern at "
             "Hollow End\nAuthor: Iris Penhallow\n\n*** START OF THE PROJECT GUTENBERG EBOOK THE "
             "LANTERN AT HOLLOW END ***\n\n" + TALE + "\n*** END OF THE PROJECT GUTENBERG EBOOK THE "
             "LANTERN AT HOLLOW END ***\n")


def read(text: str, fmt: str | None):
    return parse_story(text.encode(), "lantern.txt", fmt=fmt)


def test_pictures_and_notes_leave_no_narration_or_speech():
    for text, fmt in ((TALE, "prose"), (GUTENBERG, None)):
        story = read(text, fmt)
        chapter = {a.chapter for a in story.actions}  # the Gutenberg reader labels `Chapter I`
        assert [(a.character, a.text, a.chapter.rstrip(".").title()) for a in story.actions] == [
            ("narration", "Wenna lit the lantern at dusk, as she had every evening that winter.",
             "Chapter I"),
            ("Davey", "Is it lit?", "Chapter I"),
            ("Wenna", "It is lit.", "Chapter I"),
            ("narration", "Davey came back at noon with the post.", "Chapter Ii"),
        ], (fmt, chapter)
        assert story.source_format == (fmt or "gutenberg-novel")


def test_the_file_lines_stay_where_they_were():
    story = read(TALE, "prose")
    lines = TALE.splitlines()
    for a in story.actions:
        assert a.text.split()[0].strip('"') in lines[a.line - 1]


def test_a_picture_inside_a_line_and_numbered_notes():
    lines = ["[Picture: A lantern] Wenna lit it.", "", "Davey ran.[1] He fell.", "",
             "[1] Davey was six.--Editor.", "a note of two lines", "", "Wenna laughed."]
    assert blank_illustrations(lines) == ["Wenna lit it.", "", "Davey ran. He fell.", "", "", "", "",
                                          "Wenna laughed."]


def test_a_bracket_that_never_closes_is_left_alone():
    lines = ["[Illustration: a lantern", ""] + ["Wenna waited."] * 50
    assert blank_illustrations(lines) == lines
    assert blank_illustrations(["[Illustration: two lines", "of caption]", "Wenna."]) == ["", "", "Wenna."]
