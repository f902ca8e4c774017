"""Reply hygiene: one line of the requested character, or a clear rejection."""

from __future__ import annotations

import pytest

from bookmarks.engine.actor import Line, act, actor_messages, clean_reply, is_clean
from bookmarks.errors import ModelError
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel
from tests.conftest import make_llm

OTHERS = ["Tobias Bell", "Wren"]
SCENE = [Line("Tobias Bell", "Where is the boat?"), Line("narration", "Rain.")]


@pytest.mark.parametrize("raw,expected", [
    ("It sank at noon.", "It sank at noon."),
    ("Mara: It sank at noon.", "It sank at noon."),
    ("**Mara:** It sank.", "It sank."),
    ("MARA (quietly): It sank.", "It sank."),
    ("Mags: Gone.", "Gone."),
    ('"It sank at noon."', "It sank at noon."),
    ("It sank.\nTobias Bell: What?\nMara: Yes.", "It sank."),
    ("It sank. Wren: no it didn't", "It sank."),
    ("It sank.<|im_end|>", "It sank."),
    ("It sank.\n\nTobias nods and leaves the room.", "It sank."),
    ("I think\nit sank.", "I think it sank."),
    ("## It sank at noon.", "It sank at noon."),
    ("It sank. Mara should keep in mind (story memory): rain.", "It sank."),
    ("It sank. Mara's goal (state, as of action 27) [actions 1–4] rain", "It sank."),
    ("It sank. Mara's goal (#12, state, as of action 27) rain", "It sank."),
])
def test_clean_keeps_one_line_of_the_character(raw, expected):
    text, reason = clean_reply(raw, "Mara", aliases=["Mags"], others=OTHERS, scene=SCENE)
    assert (text, reason) == (expected, "ok")


@pytest.mark.parametrize("raw,reason", [
    ("", "empty"),
    ("Tobias Bell: I will find it.", "spoke as 'Tobias Bell'"),
    ("Narration: The rain stops.", "spoke as"),
    ("Captain: Ahoy.", "spoke as 'Captain'"),
    ("Mara: ...", "no words"),
    ("Where is the boat?", "repeated a line"),
    ("Write Mara's next line.", "no words"),
    ("Mara should keep in mind (story memory): the boat.", "no words"),
])
def test_clean_rejects(raw, reason):
    text, why = clean_reply(raw, "Mara", aliases=["Mags"], others=OTHERS, scene=SCENE)
    assert text is None and reason in why


def test_long_reply_is_cut_at_a_sentence():
    text, _ = clean_reply("Yes. " * 200, "Mara")
    assert len(text) <= 500 and text.endswith(".")


def test_is_clean_only_when_untouched():
    assert is_clean("It sank.", "Mara")
    assert not is_clean("Mara: It sank.", "Mara")


def test_act_reasks_until_usable_and_reports_tries():
    fake = ScriptedFakeModel(["Tobias Bell: no", "", "Mara: At noon."])
    result = run_sync(act(make_llm(fake, role="actor", temperature=0.7), story_title="T",
                          character="Mara", scene=SCENE, others=OTHERS))
    assert result.text == "At noon." and result.tries == 3 and len(result.rejected) == 2
    temps = [r.temperature for r in fake.history]
    assert temps[0] == 0.7 and temps[2] > temps[1] > temps[0]


def test_act_fails_clearly_after_bounded_tries_when_no_stand_in_is_allowed():
    fake = ScriptedFakeModel(default="Tobias Bell: mine")
    with pytest.raises(ModelError, match="no usable line for Mara in 4 tries"):
        run_sync(act(make_llm(fake, role="actor"), story_title="T", character="Mara",
                     scene=SCENE, others=OTHERS, stand_in=False))
    assert len(fake.history) == 4


def test_act_degrades_to_a_stand_in_after_bounded_tries():
    """No try gave a line: the turn still comes, as a stand-in that says why."""
    fake = ScriptedFakeModel(default="Tobias Bell: mine")
    result = run_sync(act(make_llm(fake, role="actor"), story_title="T", character="Mara",
                          scene=SCENE, others=OTHERS))
    assert len(fake.history) == 4 and result.tries == 4
    assert result.text == "[Mara hesitates and says nothing.]"
    assert "no usable line for Mara in 4 tries" in result.fallback
    assert "spoke as 'Tobias Bell'" in result.fallback


def test_a_script_of_the_scene_gives_the_characters_own_line():
    """A small model often writes the scene on as a script: the character's labelled line
    in it is the reply, up to the next speaker's label."""
    raw = "Tobias Bell: Where were you?\nMara: At the quay, mending nets.\nTobias Bell: Liar."
    assert clean_reply(raw, "Mara", others=OTHERS)[0] == "At the quay, mending nets."
    # without a line of Mara's it is still another speaker's reply
    assert clean_reply("Tobias Bell: Where were you?\nTobias Bell: Well?", "Mara",
                       others=OTHERS)[0] is None
    fake = ScriptedFakeModel([raw])
    result = run_sync(act(make_llm(fake, role="actor"), story_title="T", character="Mara",
                          scene=SCENE, others=OTHERS))
    assert result.text == "At the quay, mending nets." and result.tries == 1


def test_prompt_puts_stable_text_first_and_scene_last():
    msgs = actor_messages(story_title="The Ferry", character="Mara", scene=SCENE,
                          grounding="Mara hates rain.")
    assert msgs[0]["role"] == "system" and "Mara" in msgs[0]["content"]
    user = msgs[1]["content"]
    assert user.index("Mara hates rain.") < user.index("Tobias Bell: Where is the boat?")
    assert user.rstrip().endswith("Write Mara's next line.")
    assert "(Rain.)" in user


@pytest.mark.parametrize("raw,expected", [
    ("**Maren:** I will *sighs* pay it.", "I will [sighs] pay it."),
    ("I said **no**.", "I said no."),
    ("Five * three is fifteen.", "Five three is fifteen."),
])
def test_markdown_emphasis_never_reaches_a_line(raw, expected):
    assert clean_reply(raw, "Maren") == (expected, "ok")


@pytest.mark.parametrize("raw, why", [
    ('"Tobias Bell: I was at the quay."', "spoke as 'Tobias Bell'"),  # a label inside quotes
    ("(Tobias Bell: I was at the quay.)", "spoke as 'Tobias Bell'"),
    ("(The gulls circle the mast. Tobias Bell stares at the empty mooring for a while.)",
     "repeated a line of the scene"),  # a scene line again, in brackets and run on
    ("The Last Crossing.", "the setting or the memory"),  # the setting's heading
    ("Mara hates rain.", "the setting or the memory"),  # the grounding, copied
])
def test_labels_in_quotes_scene_lines_again_and_the_setting_are_not_lines(raw, why):
    scene = [*SCENE, Line("narration", "The gulls circle the mast. Tobias Bell stares at the "
                                       "empty mooring.")]
    text, reason = clean_reply(raw, "Mara", others=OTHERS, scene=scene,
                               context=["Scene 1: The Last Crossing. Fog on the river.",
                                        "## Mara's mood\nMara hates rain."])
    assert text is None and why in reason


@pytest.mark.parametrize("raw, kept", [
    ('"It sank at noon."', "It sank at noon."),
    ('"It sank at noon.', "It sank at noon."),
    ("- It sank at noon.", "It sank at noon."),
    ('"Go," she said, "now."', '"Go," she said, "now."'),  # marks inside the line stay
])
def test_quotes_around_the_whole_line_go_and_quotes_inside_stay(raw, kept):
    assert clean_reply(raw, "Mara", others=OTHERS, scene=SCENE)[0] == kept


def test_a_direction_about_someone_else_is_not_the_characters_line():
    assert clean_reply("(Tobias Bell nods towards the door.)", "Mara", others=OTHERS)[0] is None
    assert "narrated another character" in clean_reply("[Tobias Bell's hand shakes.]", "Mara",
                                                       others=OTHERS)[1]
    # the character's own direction, or a line that names another, stays
    assert clean_reply("(Mara nods towards the door.)", "Mara", others=OTHERS)[0]
    assert clean_reply("Tobias Bell nods, and so do I.", "Mara", others=OTHERS)[0]
