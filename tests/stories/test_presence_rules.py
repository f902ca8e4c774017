"""Presence as a reader would judge it, and plays read from any copy.

Every text here was written for these tests (no line is taken from a real play). The
characters: Sir Giles Morland, a magistrate; John Harcourt, his nephew ("Jack"); Rosamund,
Queen of the Revels; Peg, a maid; a Servant."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from bookmarks.stories.cast_names import Finder
from bookmarks.stories.directions import read
from bookmarks.stories.importers import detect_format, parse_story
from bookmarks.stories.presence import derive
from bookmarks.stories.story import Action, Character
from tests.conftest import ROOT

GILES, JOHN, ROSA, PEG, SERVANT = "Sir Giles Morland", "John Harcourt", "Rosamund", "Peg", "Servant"
CAST = [Character(name=GILES, aliases=["Giles"]), Character(name=JOHN, aliases=["Jack"]),
        Character(name=ROSA, aliases=["Queen"]), Character(name=PEG), Character(name=SERVANT)]


def stage(*lines: tuple[str, str], chapters: list[str] | None = None) -> list[set[str]]:
    """Who is present at each line of a little play: (speaker or "", text)."""
    actions = [Action(index=i, character=who or "narration", text=text,
                      chapter=(chapters[i - 1] if chapters else "Scene 1"))
               for i, (who, text) in enumerate(lines, start=1)]
    per = derive(actions, CAST)
    return [per[i] for i in range(1, len(actions) + 1)]


def moves(text: str, actor: str | None = None, on: set[str] | None = None) -> list[tuple[str, set]]:
    present = {GILES, JOHN, ROSA} if on is None else on
    return [(m.kind, set(m.names)) for m in read(text, Finder(CAST), actor, present)]


# --- directions everywhere ----------------------------------------------------------------


def test_a_direction_inside_a_speech_is_read_in_order():
    at = stage(("", "Enter GILES and PEG."),
               (PEG, "The carriage is ready, sir. [Goes out.]"),
               (GILES, "(To himself.) At last, alone."),
               (GILES, "Now for the letter. _[Enter JACK.]_"),
               (GILES, "Nephew! (Exit JACK.) Gone again."))
    assert at[1] == {GILES, PEG}  # Peg heard her own words: she goes out after them
    assert at[2] == {GILES}  # a bare exit in a speech is its speaker's
    assert at[3] == {GILES}  # Jack enters at the end: he heard none of the words before
    assert at[4] == {GILES, JOHN}  # who heard any of the words: Jack heard "Nephew!"


def test_a_direction_gives_the_stage_after_it():
    at = stage(("", "Enter GILES, JACK and ROSAMUND."), ("", "Exit JACK."),
               ("", "Enter PEG with a tray, and exit."), ("", "Exeunt."))
    assert at == [{GILES, JOHN, ROSA}, {GILES, ROSA}, {GILES, ROSA}, set()]


@pytest.mark.parametrize("direction", [
    "GILES goes out.", "GILES leaves the room.", "GILES sweeps out in a fury.",
    "GILES staggers out.", "GILES goes into the house.", "GILES goes down the garden.",
    "GILES goes upstairs.", "GILES withdraws into the library.", "GILES goes off.",
    "He bows, and goes out through the hall.", "Exit GILES, R.H.", "Exit SIR GILES.",
    "Exit MORLAND.", "GILES vanishes.", "GILES runs off, L."])
def test_exits_by_any_common_verb(direction):
    got = moves(direction, actor=GILES)
    assert ("exit", {GILES}) in got, got


@pytest.mark.parametrize("direction", [
    "GILES retires to the fireplace.", "GILES goes to the door.", "GILES crosses to L.",
    "GILES leaves the door open behind him.", "GILES leaves JACK and sits.", "Going.",
    "GILES takes off his gloves.", "GILES calls out.", "GILES goes into the corner.",
    "The music dies away.", "GILES withdraws.", "GILES falls on his knees."])
def test_stage_business_that_is_no_exit(direction):
    got = moves(direction, actor=GILES)
    assert not [k for k, n in got if k in ("exit", "die")], got


def test_groups():
    assert moves("Exeunt all but ROSAMUND.") == [("exit", {GILES, JOHN})]
    assert moves("Exeunt all except JACK.") == [("exit", {GILES, ROSA})]
    assert moves("Exeunt severally.") == [("exit", {GILES, JOHN, ROSA})]
    assert moves("They all go off except GILES.") == [("exit", {JOHN, ROSA})]
    assert moves("Manet JACK.") == [("exit", {GILES, ROSA})]
    assert moves("Exit a Footman.", actor=GILES) == []  # someone outside the cast: no one we know
    assert moves("JACK and ROSAMUND go off together.") == [("exit", {JOHN, ROSA})]


def test_entrances_by_any_verb_and_in_and_out_is_neither():
    on: set[str] = set()
    for direction in ("ROSAMUND comes in.", "ROSAMUND enters, breathless.", "Re-enter ROSAMUND.",
                      "ROSAMUND runs in.", "ROSAMUND returns.", "ROSAMUND is discovered reading.",
                      "To ROSAMUND, who now enters.", "ROSAMUND hurries on, late.",
                      "ROSAMUND steps aboard with a basket."):
        assert ("enter", {ROSA}) in moves(direction, actor=GILES, on=on), direction
    assert moves("PEG comes in with JACK.", on=on) == [("enter", {PEG}), ("enter", {JOHN})]
    assert not moves("The dogs run in and out of the room.", on={GILES})
    # a description between the names of an entrance; a `he` is the one last named
    assert moves("Enter GILES, with his hat in his hand, and PEG, carrying a lamp.", on=on) == [
        ("enter", {GILES, PEG})]
    assert moves("JACK stumbles. A chair falls. He staggers out.", actor=ROSA,
                 on={JOHN, ROSA}) == [("exit", {JOHN})]


def test_deaths_and_the_dead_stay_gone():
    at = stage(("", "Enter GILES and JACK."), (JOHN, "Have at you!"),
               (GILES, "I am slain."), ("", "Falls and dies."),
               (JOHN, "What have I done? Sir Giles!"), ("", "Kneeling by GILES."),
               ("", "Exeunt, bearing off the body of GILES."))
    assert at[2] == {GILES, JOHN}  # the dying man hears his own last words
    assert at[3] == at[4] == at[5] == {JOHN}  # the body perceives nothing, named or not
    assert at[6] == set()
    faint = stage(("", "Enter JACK and ROSAMUND."), (ROSA, "I faint. [Faints.]"), (JOHN, "She is dead!"))
    assert faint[2] == {JOHN, ROSA}  # a faint, and words about death, are no death


def test_hidden_listeners_witness_and_voices_off_stage_do_not():
    at = stage(("", "Enter ROSAMUND and GILES."), ("", "GILES hides behind the screen."),
               ("", "Enter JACK."), (JOHN, "We are alone, Rosamund."),
               ("", "JACK rushes off behind the curtain, and returns."),
               (PEG, "[Within.] Madam! The coach!"), (ROSA, "Coming, Peg!"),
               ("", "Exit JACK behind the curtain."))
    assert at[3] == {ROSA, GILES, JOHN}  # the hidden listener hears the secret
    assert at[4] == {ROSA, GILES, JOHN}
    assert at[5] == at[6] == {ROSA, GILES, JOHN}  # Peg only calls from within
    assert at[7] == {ROSA, GILES}  # `Exit … behind the curtain` is an exit


def test_a_voice_from_off_stage_stays_off_until_an_entrance():
    at = stage(("", "Enter ROSAMUND."), (GILES, "[calls out from his study]. Is that you, my dear?"),
               (ROSA, "Yes, uncle."), (GILES, "Then come and see."),
               (GILES, "Well? [He opens the study door and looks into the room.] Here I am."),
               (ROSA, "[Calling off.] Peg! Tea!"))
    assert at[1] == at[2] == at[3] == {ROSA}
    assert at[4] == {ROSA, GILES}  # his words after the entrance only, as one action each side
    assert at[5] == {ROSA, GILES}  # calling off stage is done on stage


def test_a_new_scene_starts_empty_and_an_emptied_stage_opens_one():
    at = stage(("", "Enter GILES and JACK."), (GILES, "Good night."), ("", "Enter ROSAMUND."),
               (ROSA, "The garden at dawn."), ("", "Exeunt."), ("", "GILES in his study, writing."),
               (GILES, "Still no word."), chapters=["Scene 1", "Scene 1", "Scene 2", "Scene 2",
                                                    "Scene 2", "Scene 2", "Scene 2"])
    assert at[2] == {ROSA} and at[3] == {ROSA}
    assert at[5] == {GILES}  # named first after the stage emptied: the next scene's opening


def test_names_in_directions_through_aliases_short_forms_and_plurals():
    find = Finder(CAST + [Character(name="Good Angel"), Character(name="Evil Angel")])
    said = [n for _, _, n in find.mentions("Exit MORLAND. Enter Sir Giles. Enter QUEEN. JOHN bows.")]
    assert said == [GILES, GILES, ROSA, JOHN]
    assert find.mentions("They walk by the River Morland, past Morland Hall.") == []
    assert find.mentions("GILES'S study") == []  # a possessive names a place, not a person
    assert [n for _, _, n in find.groups_in("Exeunt ANGELS.")] == [{"Good Angel", "Evil Angel"}]


def test_someone_at_the_door_and_an_errand_are_present_for_a_while():
    at = stage(("", "Enter GILES and JACK."), (PEG, "[at the door]. A lady to see you, sir."),
               (GILES, "Show her up."), (JOHN, "Who can it be?"),
               ("", "Enter SERVANT."), (SERVANT, "Lady Rosamund, sir."),
               (GILES, "Good."), (JOHN, "Uncle, I must go."))
    assert at[1] == at[2] == {GILES, JOHN, PEG}  # her own words and the reply to them
    assert at[3] == {GILES, JOHN}  # then taken to have gone (no exit written)
    assert at[5] == at[6] == {GILES, JOHN, SERVANT}
    assert at[7] == {GILES, JOHN}  # an unnamed servant's errand is done


def test_no_exit_written_means_no_one_leaves():
    at = stage(("", "Enter GILES and JACK."), (GILES, "Goodbye, nephew."), (ROSA, "Hello?"),
               (GILES, "Nobody here but us."))
    assert at[3] == {GILES, JOHN, ROSA}  # a goodbye is no exit; a speaker is there


def test_a_given_present_list_is_taken_as_it_is():
    actions = [Action(index=1, character=GILES, text="Hm.", chapter="S", present=[]),
               Action(index=2, character=GILES, text="Ha.", chapter="S", present=["Jack", "Giles"])]
    assert derive(actions, CAST) == {1: set(), 2: {GILES, JOHN}}


# --- plays from any copy ------------------------------------------------------------------

PLAY = """THE MAGISTRATE'S WAGER

A Comedy

THE PERSONS OF THE PLAY

JOHN HARCOURT, J.P.
SIR GILES MORLAND, his uncle
ROSAMUND (Queen of the Revels)
PEG, a maid


FIRST ACT

_A parlour. Morning._

[PEG is dusting. Enter JACK.]

JACK.
Is my uncle down?

PEG.
Not yet, sir. _[Going to the door.]_ Shall I call him?

QUEEN.
_[calls out from the garden]_. Peg! My gloves!

PEG.
Coming, ma'am! [Goes out.]

JACK.
A quiet house, for once.[3]

[Enter SIR GILES.] Good morning, uncle.

SIR GILES.
Good morning. Is the Queen about?

JACK.
In the garden. [SIR GILES goes out.] And now to write my letter.
"""


def test_a_play_without_gutenberg_markers_is_a_gutenberg_play():
    lines = PLAY.splitlines()
    assert detect_format(lines, "wager.txt") == "gutenberg-play"
    no_list = "\n".join(ln for ln in lines if "PERSONS" not in ln)  # not a script either
    assert detect_format(no_list.splitlines(), "wager.txt") == "gutenberg-play"
    assert detect_format(["ANNA: hi", "[pause]", "BEN: ho"], "x.txt") == "script"


def test_markup_goes_and_the_persons_list_names_the_speakers():
    story = parse_story(PLAY.encode(), "wager.txt")
    cast = {c.name: set(c.aliases) for c in story.characters}
    assert "Jack" in cast["John Harcourt"]  # a common short form of the listed first name
    assert "Queen" in cast["Rosamund"]  # the first word of what the list says of her
    assert "Sir Giles" in cast["Sir Giles Morland"]
    text = " ".join(a.text for a in story.actions)
    assert "_" not in text and "[3]" not in text
    assert "Not yet, sir. [Going to the door.] Shall I call him?" in text  # brackets kept


def test_a_paragraph_that_opens_with_a_direction_goes_on_with_the_speech():
    story = parse_story(PLAY.encode(), "wager.txt")
    rows = [(a.character, a.text) for a in story.actions]
    i = rows.index(("narration", "Enter SIR GILES."))
    assert rows[i - 1] == ("John Harcourt", "A quiet house, for once.")
    assert rows[i + 1] == ("John Harcourt", "Good morning, uncle.")
    j = rows.index(("narration", "SIR GILES goes out."))  # a speech split at a direction that
    assert rows[j - 1] == ("John Harcourt", "In the garden.")  # takes someone off
    assert rows[j + 1] == ("John Harcourt", "And now to write my letter.")
    per = derive(story.actions, story.characters)
    by_text = {a.text: per[a.index] for a in story.actions}
    assert by_text["Is my uncle down?"] == {"John Harcourt", "Peg"}
    assert by_text["[calls out from the garden]. Peg! My gloves!"] == {"John Harcourt", "Peg"}
    assert by_text["A quiet house, for once."] == {"John Harcourt"}
    assert by_text["And now to write my letter."] == {"John Harcourt"}


def test_italic_labels_labels_alone_braces_and_unclosed_brackets():
    text = ("DRAMATIS PERSONAE\n\n  KING EDGAR (the King)\n  OSWIN, a lord\n  WULF, a thane\n\n\n"
            "ACT I.\n\n  _Enter_ KING, OSWIN _and_ WULF.\n\n"
            "  _King._ Is the hall made ready?[12]\n  See to it.\n\n"
            "  _Osw._ }\n        }   It is, my liege.\n  _Wulf._}\n\n"
            "  _King._\n\n    (_Rising._)\n\n  Then leave us.\n\n"
            "    [WULF _bows_, L.H.\n\n  _Osw._ We go.\n\n    [_Exeunt_ OSWIN _and_ WULF.]\n\n"
            "  _King._ Alone.\n\n    [_Draws._]\n\n  And armed.\n\n"
            "  _Enter_ OSWIN.\n\n  _Osw._ My liege, the hall is full.            [Exit.\n\n"
            "  _King._ Then let them wait.\n")
    story = parse_story(text.encode(), "edgar.txt")
    assert story.source_format == "gutenberg-play"
    rows = [(a.character, a.text) for a in story.actions]
    assert rows[1] == ("King Edgar", "Is the hall made ready? See to it.")
    assert rows[2] == ("Oswin", "[together with Wulf] It is, my liege.")
    assert rows[3] == ("King Edgar", "[Rising.] Then leave us.")
    assert rows[4] == ("narration", "WULF bows, L.H.")
    assert rows[-5] == ("King Edgar", "And armed.")  # the speech goes on after a direction
    assert rows[-3:] == [("Oswin", "My liege, the hall is full."), ("narration", "Exit."),
                         ("King Edgar", "Then let them wait.")]
    per = derive(story.actions, story.characters)
    assert per[len(rows) - 4] == per[len(rows)] == {"King Edgar"}


def test_the_benchmark_runs_on_a_tune_play(capsys):
    spec = importlib.util.spec_from_file_location("presence_accuracy",
                                                  ROOT / "benchmarks" / "presence_accuracy.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    results = bench.main(["--plays", "earnest"])
    assert results["earnest"].points == 56 and results["earnest"].rate >= 0.9
    assert "earnest" in capsys.readouterr().out
