"""The stricter speaker rules (attribution_rules.py), on text written for these tests: two
men talking (Mr. Cray, a clockmaker, and Tom Ashe, his apprentice), and a woman."""

from __future__ import annotations

from bookmarks.stories.importers import parse_story


def said(text: str) -> dict[str, str]:
    return {a.text: a.character for a in parse_story(text.encode(), "t.txt", fmt="prose").actions}


INTRO = ("Mr. Cray bent over the bench. Tom Ashe stood by the window, and Tom Ashe was "
         "watching the street.\n\n")


def test_a_reply_tagged_by_a_pronoun_is_the_other_man():
    s = said(INTRO + '"The clock is slow again," said Mr. Cray. "Fetch the oil."\n\n'
             '"I fetched it an hour ago," he answered. "It is on the shelf."\n')
    assert s["The clock is slow again. Fetch the oil."] == "Mr. Cray"
    assert s["I fetched it an hour ago. It is on the shelf."] == "Tom Ashe"  # not Mr. Cray again


def test_a_pronoun_said_after_ones_own_line_goes_on_unless_it_answers():
    s = said(INTRO + '"May I open the window?" asked Tom Ashe, and without waiting for an answer '
             'he pushed it wide.\n\n'
             '"There, that is better," he said. "The air in here was stale."\n')
    assert s["There, that is better. The air in here was stale."] == "Tom Ashe"  # (`he answered`: Mr. Cray)


def test_a_reply_is_left_unsure_when_several_could_answer():
    s = said("Mr. Cray, Tom Ashe and old Peter Lowe sat by the fire.\n\n"
             '"It is late," said Mr. Cray.\n\n'
             '"Not so late," he answered.\n')
    assert s['"Not so late," he answered.'] == "narration"


def test_a_pronoun_that_leads_the_narration_is_not_the_name_after_it():
    s = said(INTRO + '"Fetch the oil," said Mr. Cray.\n\n'
             '"I have it here," said Tom Ashe.\n\n'
             'Then he looked at Mr. Cray. "Shall I oil the wheels?" he said.\n')
    assert s["Shall I oil the wheels?"] == "Tom Ashe"


def test_a_vocative_reply_goes_to_the_other_speaker():
    s = said(INTRO + '"Fetch the oil," said Mr. Cray.\n\n'
             '"I have it here," said Tom Ashe.\n\n'
             'The wind rose outside, and the shutters rattled against the old grey stones.\n\n'
             '"Good lad, Tom. Now the wheels."\n')
    assert s["Good lad, Tom. Now the wheels."] == "Mr. Cray"  # no turn after the narration


def test_someone_alone_goes_on_speaking():
    s = said('"I wonder," said Mary.\n\n"What is that?" she asked.\n')
    assert s["What is that?"] == "Mary"


def test_a_name_the_cast_does_not_know_on_the_chain_leaves_the_pronoun_unsure():
    """`"Like this?" asked Mr. Cray, and he whistled. Wills shuddered at the sound.` ¶
    `"The same, sir," he said`: Wills, whom the tags never name, is the `he` a reader takes;
    the rules do not know him, so they leave the line unsure rather than give it to Mr. Cray.
    With a description of no one in his place the line is Mr. Cray's."""
    text = (INTRO + "Later that week the policeman Wills came in, and Wills stood by the door.\n\n"
            '"Like this?" asked Mr. Cray, and he gave a long low whistle that rose and fell. Wills '
            'shuddered at the sound of it in the quiet room.\n\n'
            '"The same, sir, I think," he said, "but louder."\n')
    def who(t: str) -> str:
        return next(c for line, c in said(t).items() if "The same, sir" in line)
    assert who(text) == "narration"
    plain = text.replace("Wills shuddered at the sound of it", "The clock struck at the sound of it")
    assert who(plain) == "Mr. Cray"
