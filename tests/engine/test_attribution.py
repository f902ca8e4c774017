"""The optional model-assisted attribution pass: suggestions validated against the cast,
applied only at or above the writer's threshold."""

from __future__ import annotations

import json

from bookmarks.engine.attribution import UNKNOWN, apply, candidates, suggest
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel
from bookmarks.stories.story import Action, Character, Story
from tests.conftest import make_llm


def story() -> Story:
    return Story(title="Fog", characters=[Character(name="Slops"), Character(name="Mate")],
                 actions=[
                     Action(index=1, character="narration", text="The fog came down."),
                     Action(index=2, character="Slops", text="Hold her steady."),
                     Action(index=3, character="narration", text='"Aye, steady it is."'),
                     Action(index=4, character="narration", text='"Who goes there?" came a voice.'),
                     Action(index=5, character="narration", text="Nobody answered."),
                 ])


def test_suggestions_are_validated_and_applied_at_a_threshold():
    s = story()
    assert candidates(s) == [3, 4]
    fake = ScriptedFakeModel([
        json.dumps({"speaker": "Captain Nemo", "confidence": 0.9}),  # not in the cast: re-asked
        json.dumps({"speaker": "mate", "confidence": 0.8}),
        json.dumps({"speaker": UNKNOWN, "confidence": 0.9}),
    ])
    out = run_sync(suggest(make_llm(fake), s))
    assert [(x.index, x.speaker, x.confidence) for x in out] == [(3, "Mate", 0.8),
                                                                  (4, UNKNOWN, 0.0)]
    assert "The paragraph:" in fake.prompts[0] and "Hold her steady." in fake.prompts[0]
    applied = apply(s, out, min_confidence=0.7)
    assert [a.character for a in applied.actions] == ["narration", "Slops", "Mate", "narration",
                                                      "narration"]
    assert [a.character for a in apply(s, out, 0.9).actions][2] == "narration"
    # a writer may check the model's word as a rule's: the line says whose word it is
    assert [a.check for a in applied.actions] == [None, None, "the model's suggestion (0.80)",
                                                  None, None]
