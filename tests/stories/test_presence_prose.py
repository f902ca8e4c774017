"""Presence in prose, where no one is written off: a section break or a jump in time starts
a new scene, shown by what it shows; `… were alone` says who is there; a chapter's first
paragraph names people who are not there. Text written for these tests."""

from __future__ import annotations

import importlib.util
import sys

from bookmarks.stories.importers import parse_story
from bookmarks.stories.presence import FADE, derive
from bookmarks.stories.story import Action, Character
from tests.conftest import ROOT

OPENING = ("CHAPTER I\n\nAnna walked into the kitchen, where Tom was reading by the stove.\n\n"
           '"Good morning," said Anna.\n\n"Morning," said Tom, and turned a page.\n\n')


def present(text: str) -> dict[str, set[str]]:
    """The first words of each action → who is present at it."""
    story = parse_story(text.encode(), "tale.txt", fmt="prose")
    per = derive(story.actions, story.characters, prose=True)
    return {a.text[:14]: per[a.index] for a in story.actions}


def test_a_section_break_or_a_jump_in_time_starts_a_new_scene():
    seen = present(OPENING + "* * *\n\nAnna sat on the beach at Dover with the gulls.\n\n"
                   '"I miss him," said Anna.\n\nMartha came down the path with a basket.\n\n'
                   '"There you are," said Martha.\n\n'
                   "The next morning Tom walked alone to the station in the rain.\n\n"
                   '"One ticket for London," said Tom.\n')
    assert seen["Morning."] == {"Anna", "Tom"}
    assert seen["* * *"] == set()
    assert seen["I miss him."] == {"Anna"}  # Tom was left in the kitchen
    assert seen["There you are."] == {"Anna", "Martha"}
    assert seen["One ticket for"] == {"Tom"}


def test_meanwhile_minutes_and_a_tale_told_in_a_speech_keep_the_scene():
    seen = present(OPENING + "Meanwhile Tom went on reading, and the kettle began to sing.\n\n"
                   '"Tea?" said Anna.\n\n'
                   "Two minutes later the kettle boiled over onto the stove.\n\n"
                   '"Now look," said Tom.\n\n'
                   '"A week passed, and I heard nothing from my brother. Then one night he came '
                   'home," said Anna.\n\n"Go on," said Tom.\n')
    for words in ("Tea?", "Now look.", "Go on."):
        assert seen[words] == {"Anna", "Tom"}, words


def test_those_said_to_be_alone_are_all_who_are_there():
    seen = present(OPENING + "Martha came in with the post, and Tom read his letter.\n\n"
                   '"Bad news?" said Martha.\n\n"No," said Tom.\n\n'
                   "When Anna and Tom were alone, she took the letter from the table.\n\n"
                   '"Who is it from?" said Anna.\n\n'
                   "Anna was not alone for long: Martha came back for the tray.\n\n"
                   '"Leave it," said Anna.\n')
    assert seen["No."] == {"Anna", "Martha", "Tom"}
    assert seen["Who is it from"] == {"Anna", "Tom"}
    assert "Martha" in seen["Leave it."]  # `not alone` says nothing of who is there


def test_a_chapter_that_opens_on_people_talked_of_does_not_bring_them():
    seen = present("CHAPTER I\n\nThat evening Utterson read the will of his friend Dr. Jekyll, "
                   "which left everything to one Edward Hyde.\n\n"
                   '"It is madness," said Utterson.\n\n'
                   "CHAPTER II\n\nJekyll met Hyde at the door.\n\n"
                   '"You are late," said Jekyll.\n\n"I am never late," said Hyde.\n')
    assert seen["It is madness."] == {"Utterson"}


def test_comings_and_goings_told_in_the_past():
    """`Martha came in`, `Tom went out`: the past tense of a novel moves people as a stage
    direction's present does. `He went out` says nothing the reader can place (whose `he`?),
    and `went up the stairs` takes the scene along."""
    seen = present(OPENING + "Martha came in with the post.\n\n"
                   '"Letters," said Martha.\n\nTom went out into the yard.\n\n'
                   '"Has he gone?" said Anna.\n\n"Yes," said Martha.\n\n'
                   "He went out as well.\n\n"
                   '"Well," said Martha.\n\n'
                   "Anna went up the stairs with the candle, and Martha followed.\n\n"
                   '"Mind the step," said Martha.\n')
    assert seen["Letters."] == {"Anna", "Martha", "Tom"}
    assert seen["Has he gone?"] == {"Anna", "Martha"}
    assert seen["He went out as"] == {"Anna", "Martha"}  # not Martha, the last to speak
    assert seen["Mind the step."] == {"Anna", "Martha"}


def test_someone_who_neither_speaks_nor_acts_for_long_is_gone():
    """A novel seldom writes exits: someone who has not spoken, acted or been called for
    `FADE` actions has left the scene (someone called by name is there)."""
    talk = "".join(f'"Line {k} of the talk," said {"Anna" if k % 2 else "Tom"}.\n\n'
                   for k in range(FADE + 2))
    seen = present(OPENING + '"Tea," said Martha, and she stood by the door.\n\n' + talk
                   + '"Martha, more tea," said Anna.\n')
    assert "Martha" in seen["Line 0 of the t"[:14]]
    assert "Martha" not in seen[f"Line {FADE + 1} of the"[:14]]
    assert "Martha" in seen["Martha, more t"]


def test_a_time_before_the_subject_and_a_past_perfect_leaving():
    seen = present(OPENING + "That evening Martha walked up from the village with the post.\n\n"
                   '"Two for you," said Martha.\n\n'
                   "Anna stood awhile when Martha had left her, and then Tom put down his book.\n\n"
                   '"Who were they from?" said Tom.\n')
    assert seen["That evening M"] == {"Martha"}  # a new scene: she walked up, nobody else yet
    assert "Martha" not in seen["Anna stood awh"]
    assert "Martha" not in seen["Who were they "]


def test_those_with_the_subject_are_there_too():
    """`Anna and Martha sat …`, `… with Martha upon the other`, `followed by Martha`, `found
    Martha in …` put Martha where Anna is; being angry with her or thinking of her does not."""
    scene, later = "* * *\n\n", '\n* * *\n\n"Tea?" said Martha.\n'  # Martha: one of the cast
    for line in ("Anna and Martha were at breakfast when the post came.",
                 "Presently after, Anna sat on one side of the hearth, with Martha upon the other.",
                 "Anna came into the garden, followed by Martha.",
                 "Anna found Martha in the garden.",
                 "Anna was sitting with Martha in the parlour."):
        assert present(OPENING + scene + line + later)[line[:14]] == {"Anna", "Martha"}, line
    for line in ("Anna was angry with Martha all that day.", "Anna thought of Martha and sighed."):
        assert present(OPENING + scene + line + later)[line[:14]] == {"Anna"}, line


def test_a_first_person_narrator_is_there_when_the_narration_says_i():
    """The storyteller (named `Narrator`, or with it as an alias: `Watson`) is there where the
    narration says `I` or `we`, and stays to the scene's end however long they are silent:
    a first-person narrator tells what they saw. An `I` in a line someone else says does
    not bring them."""
    cast = [Character(name="Watson", aliases=["Narrator"]), Character(name="Holmes"),
            Character(name="King")]
    talk = [("Holmes" if k % 2 else "King", f"Line {k}; I see it.") for k in range(FADE + 2)]
    lines = [("narration", "Holmes and the King sat by the fire.")] + talk  # Watson not there
    lines += [("narration", "I came in from the rain."), ("Watson", "Good evening.")] + talk
    lines += [("narration", "The next morning Holmes and the King walked to the station.")] + talk
    actions = [Action(index=i, character=who, text=text, chapter="I")
               for i, (who, text) in enumerate(lines, start=1)]
    per = derive(actions, cast, prose=True)
    first, second, third = 1, len(talk) + 2, 2 * len(talk) + 4
    assert all("Watson" not in per[i] for i in range(first, second))  # others' `I`: not theirs
    assert all(per[i] == {"Holmes", "King", "Watson"} for i in range(second + 2, third))
    assert all("Watson" not in per[i] for i in range(third, len(lines) + 1))  # a new scene


def test_the_benchmark_reads_the_novel_gold_set(capsys):
    """`presence_accuracy.py --gold presence_prose` finds every labelled point of a tune
    text in the storyline (a speech joined around its tag, a one-word line like `No.`)."""
    spec = importlib.util.spec_from_file_location("presence_accuracy",
                                                  ROOT / "benchmarks" / "presence_accuracy.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    results = bench.main(["--gold", "presence_prose", "--plays", "stevenson_jekyll_hyde_ch01_05"])
    jekyll = results["stevenson_jekyll_hyde_ch01_05"]
    assert jekyll.points == 44 and jekyll.not_found == 0
    assert "novels: measured" not in capsys.readouterr().out  # no test text was scored
