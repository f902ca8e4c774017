"""Choosing the next speaker never fails the turn.

When the model names someone who is not present twice (its choice and the re-ask), a
deterministic round-robin over the characters present stands in — never the user's
character, never the one who just spoke — recorded as a `fallback` event.
"""

from __future__ import annotations

import pytest

from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, WorstCaseMemory
from bookmarks.scenes.play import add_user_turn, choose_speaker, fallback_speaker
from tests.conftest import make_llm
from tests.engine_helpers import generated_story


@pytest.fixture
def scene(store):
    sid = store.add_story(generated_story(200))
    return store.create_scene(sid, start_point=150, cast=["Ada", "Ben", "Cora"])


def choose(store, scene, replies, user=None, events=None):
    fake = ScriptedFakeModel(replies)
    who = run_sync(choose_speaker(store, make_llm(fake, store), store.scene(scene.id), user,
                                  events=events))
    return who, fake


def test_a_valid_choice_is_taken(store, scene):
    events = []
    who, fake = choose(store, scene, ['{"speaker": "Cora"}'], events=events)
    assert who == "Cora" and len(fake.history) == 1 and events == []


def test_an_invalid_choice_is_re_asked_once(store, scene):
    who, fake = choose(store, scene, ['{"speaker": "Nobody"}', '{"speaker": "Ben"}'])
    assert who == "Ben" and len(fake.history) == 2


def test_two_invalid_choices_fall_back_to_round_robin_recorded(store, scene):
    add_user_turn(store, scene.id, "Ada", "Hello.")
    events = []
    who, fake = choose(store, scene, ['{"speaker": "Nobody"}', '{"speaker": "Dora"}'],
                       events=events)
    assert who == "Ben" and len(fake.history) == 2  # after Ada; no third call
    (fallback,) = events
    assert fallback["kind"] == "fallback" and fallback["step"] == "next-speaker"
    assert fallback["outcome"] == "round-robin: Ben"
    assert "speaker must be one of Ada, Ben, Cora" in fallback["reason"]


def test_invalid_json_twice_falls_back_too(store, scene):
    add_user_turn(store, scene.id, "Ben", "Hello.")
    who, _ = choose(store, scene, [WorstCaseMemory.INVALID_JSON] * 2)
    assert who == "Cora"


def test_the_fallback_skips_the_users_character_and_who_just_spoke(store, scene):
    s = store.scene(scene.id)
    add_user_turn(store, scene.id, "Cora", "I am Cora.")
    # the user plays Ada: never Ada; Cora just spoke: not Cora
    assert fallback_speaker(store, s, "Ada") == "Ben"
    add_user_turn(store, scene.id, "Ben", "And I Ben.")
    assert fallback_speaker(store, s, "Ada") == "Cora"
    add_user_turn(store, scene.id, "Ada", "The user speaks.")  # the user's line: skipped
    assert fallback_speaker(store, s, "Ada") == "Cora"
    who, _ = choose(store, scene, ['{"speaker": "Ada"}'] * 2, user="Ada")  # not an option
    assert who == "Cora"


def test_the_fallback_is_deterministic_and_goes_round(store, scene):
    s = store.scene(scene.id)
    seen = []
    for _ in range(6):
        who = fallback_speaker(store, s)
        assert who == fallback_speaker(store, s)
        seen.append(who)
        add_user_turn(store, scene.id, who, f"{who} speaks.")
    assert seen[:3] == seen[3:] and sorted(seen[:3]) == ["Ada", "Ben", "Cora"]
    assert all(a != b for a, b in zip(seen, seen[1:], strict=False))


def test_a_failing_model_still_fails_loudly_rather_than_guess(store, scene):
    """Only invalid choices degrade: a model that cannot be reached is an error."""
    from bookmarks.errors import ModelError

    with pytest.raises(ModelError):
        choose(store, scene, [ModelError("the server refused")])
