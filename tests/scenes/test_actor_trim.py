"""A reply cut at the length limit is kept up to its last complete sentence, not re-asked.

The re-ask of a cut reply is costly and once came back as the app's own note: a cut reply
whose complete sentences make a line (a few words that pass the cleaner) is kept trimmed
and recorded (`trimmed` among the try's notes); only when nothing usable is left before
the cut is the actor asked again.
"""

from __future__ import annotations

import pytest

from bookmarks.config import RoleConfig
from bookmarks.engine.actor import TRIMMED, Line, act, complete_sentences
from bookmarks.errors import NoUsableLineError
from bookmarks.models.llm import LENGTH_NOTE, LLM, run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory, WorstCaseMemory
from bookmarks.scenes.panel import turn_activity
from bookmarks.scenes.play import generate_turn
from tests.conftest import _no_sleep, make_llm
from tests.engine_helpers import generated_story

SCENE = [Line("Tobias", "Where is the boat?")]
LONG = ("It sank at noon, and the gulls knew it first. Nobody rowed out to look. "
        "Then the harbour master came down the steps with his lamp and his ledger and said")


def actor(fake: ScriptedFakeModel, max_tokens: int = 30) -> LLM:
    """An actor whose replies are cut at `max_tokens` (about four characters a token)."""
    fake.enforce_max_tokens = True
    return LLM(model=fake, config=RoleConfig(role="actor", temperature=0.0,
                                             max_tokens=max_tokens), sleep=_no_sleep)


def acting(llm: LLM, *, stream: bool = False, **kw):
    return run_sync(act(llm, story_title="T", character="Mara", scene=SCENE,
                        others=["Tobias"], on_text=(lambda _: None) if stream else None, **kw))


@pytest.mark.parametrize("text, kept", [
    ("It sank. Nobody rowed out to", "It sank."),
    ("“It sank!” Nobody rowed", "“It sank!”"),
    ("Ask Mr. Bell, he knows. And Dr. Hale sai", "Ask Mr. Bell, he knows."),
    ("It sank at noon and nobody", ""),
    ("Wait… the boat. It", "Wait… the boat."),
])
def test_complete_sentences(text, kept):
    assert complete_sentences(text) == kept


def test_a_cut_reply_is_kept_to_its_last_sentence_without_a_re_ask():
    fake = ScriptedFakeModel([LONG])
    result = acting(actor(fake), stream=True)  # Play streams: nothing else asks again
    assert result.text == "It sank at noon, and the gulls knew it first. Nobody rowed out to look."
    assert result.tries == 1 and len(fake.history) == 1 and result.trimmed
    ((raw, why),) = result.rejected
    assert why.startswith(TRIMMED) and raw == LONG[:120]


def test_a_reply_still_cut_after_the_models_re_ask_is_trimmed():
    fake = ScriptedFakeModel(default=LONG * 3)
    result = acting(actor(fake))
    assert result.trimmed and result.tries == 1
    assert result.text.endswith("Nobody rowed out to look.")
    assert LENGTH_NOTE not in result.text


def test_nothing_complete_before_the_cut_is_asked_again():
    fake = ScriptedFakeModel(["It sank at noon and the gulls knew it and nobody rowed out",
                              "It sank at noon."])
    result = acting(actor(fake, max_tokens=10), stream=True)
    assert result.text == "It sank at noon." and result.tries == 2 and not result.trimmed
    assert "nothing usable before the cut (no complete sentence)" in result.rejected[0][1]


def test_a_trivial_sentence_is_not_kept():
    fake = ScriptedFakeModel(["No. Then the harbour master came down the steps with his",
                              "It sank at noon."])
    result = acting(actor(fake, max_tokens=12), stream=True)
    assert result.text == "It sank at noon." and result.tries == 2
    assert "(too short)" in result.rejected[0][1]


def test_a_cut_echo_of_the_prompt_is_not_kept_and_is_asked_again_with_the_note():
    fake = ScriptedFakeModel(["Write Mara's next line. The scene so far: Tobias: Where is the b",
                              "It sank at noon."])
    result = acting(actor(fake, max_tokens=15), stream=True)
    assert result.text == "It sank at noon." and result.tries == 2
    assert "app's own words" in result.rejected[0][1]
    assert "Only Mara's own words" in fake.prompts[1]


def test_the_last_try_keeps_the_cut_line_rather_than_fail():
    fake = ScriptedFakeModel(default="It sank at noon and the gulls knew it and nobody rowed out")
    result = acting(actor(fake, max_tokens=10), stream=True, max_tries=2)
    assert result.tries == 2 and result.trimmed and result.text.endswith("…")
    assert "kept as cut" in result.rejected[-1][1]


def test_a_cut_reply_with_no_words_of_the_character_still_fails_clearly():
    fake = ScriptedFakeModel(default=LENGTH_NOTE * 3)
    with pytest.raises(NoUsableLineError, match="length limit"):
        acting(actor(fake, max_tokens=10), stream=True, stand_in=False)
    assert len(fake.history) == 4


def test_play_records_a_trimmed_line_with_the_turn(store):
    sid = store.add_story(generated_story(200))
    script = ScriptedMemory(line=LONG + " and the rest is lost.")
    fake = ScriptedFakeModel(default=script)
    llms = {"memory": make_llm(fake, store), "actor": actor(fake)}
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="vanilla")
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada", on_text=lambda _: None))
    assert turn.text.endswith("Nobody rowed out to look.")
    activity = turn_activity(store, turn.id)
    assert activity["actor_tries"] == 1
    (acted,) = [e for e in store.turn_events(turn.id) if e["kind"] == "acted"]
    assert acted["rejected"][0]["reason"].startswith(TRIMMED)


def test_the_worst_case_double_can_run_past_the_length_limit():
    script = WorstCaseMemory(actor="echo-then-long")
    fake = ScriptedFakeModel(default=script, enforce_max_tokens=True)
    llm = LLM(model=fake, config=RoleConfig(role="actor", max_tokens=100), sleep=_no_sleep)
    result = run_sync(act(llm, story_title="T", character="Mara", scene=SCENE))
    assert result.tries == 2 and result.trimmed
    assert result.text.startswith(script.line.rstrip(".")) and result.text.endswith(".")
