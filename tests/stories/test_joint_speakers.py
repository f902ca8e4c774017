"""A speaker heard only in joint speeches (`BRAND and TULLY.`, `_Brand._ }` braces) is a
member of the cast: directions find them, and presence follows them.

Every text here was written for these tests: Lord Ashby, a host; his two guests Brand and
Tully, who only ever speak together; Mary, a maid."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story
from bookmarks.stories.presence import derive

PLAY = """\
THE PERSONS OF THE PLAY

LORD ASHBY, a host
BRAND, a guest
TULLY, another guest
MARY, a maid


ACT I.

Enter LORD ASHBY and MARY.

LORD ASHBY. Are the guests come?

MARY. They are in the hall, my lord.

LORD ASHBY. Then show them in.

[Exit MARY.]

Enter BRAND and TULLY.

BRAND and TULLY. Good evening, my lord.

LORD ASHBY. You are welcome, both of you. Sit, and take some wine.

BRAND and TULLY. We thank you.

[Exit TULLY.]

LORD ASHBY. Your friend is in a hurry.

[Exit BRAND.]

LORD ASHBY. And now I am alone.
"""

BRACES = """\
DRAMATIS PERSONAE

  DUKE ORSO, a prince
  PIP, a page
  NED, another page


ACT I.

  _Enter_ DUKE, PIP _and_ NED.

  _Duke._ Where is my horse?

  _Pip._ }
        }   Saddled, my lord.
  _Ned._}

  _Duke._ Then go before me.

    [_Exeunt_ PIP _and_ NED.]

  _Duke._ I follow.
"""


def _rows(text: str, name: str):
    story = parse_story(text.encode(), name)
    per = derive(story.actions, story.characters)
    return story, [(a.character, a.text, per[a.index]) for a in story.actions]


def test_a_speaker_heard_only_in_joint_speeches_joins_the_cast():
    story, rows = _rows(PLAY, "ashby.txt")
    names = {c.name for c in story.characters}
    assert {"Lord Ashby", "Brand", "Tully", "Mary"} <= names
    assert not any(a.character == "Tully" for a in story.actions)  # the speech is Brand's
    assert ("Brand", "[together with Tully] Good evening, my lord.") in [r[:2] for r in rows]


def test_directions_naming_a_joint_only_speaker_move_them():
    _, rows = _rows(PLAY, "ashby.txt")
    by_text = {text: present for _, text, present in rows}
    assert by_text["[together with Tully] Good evening, my lord."] == {"Lord Ashby", "Brand", "Tully"}
    assert by_text["Your friend is in a hurry."] == {"Lord Ashby", "Brand"}  # Tully went out
    assert by_text["And now I am alone."] == {"Lord Ashby"}


def test_a_joint_speech_in_braces_keeps_both_speakers():
    story, rows = _rows(BRACES, "orso.txt")
    assert {"Pip", "Ned"} <= {c.name for c in story.characters}
    by_text = {text: present for _, text, present in rows}
    assert by_text["Where is my horse?"] == {"Duke Orso", "Pip", "Ned"}
    assert by_text["I follow."] == {"Duke Orso"}
