"""The attribution benchmark places each imported action in the gold paragraph it came
from; a misplaced action scores a right speaker as a miss."""

from __future__ import annotations

import importlib.util
import sys

from bookmarks.stories.story import Action, Character, Story
from tests.conftest import ROOT


def _benchmark():
    spec = importlib.util.spec_from_file_location("attribution_accuracy_under_test",
                                                  ROOT / "benchmarks" / "attribution_accuracy.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_short_speech_is_placed_after_the_narration_before_it():
    aa = _benchmark()
    text = ("He crossed the theatre, once crowded with students and now lying silent.\n\n"
            "“And now,” said Mr. Utterson, as soon as Poole had left them, “you have heard?”\n")
    acts = [("narration", "He crossed the theatre, once crowded with students and now lying silent."),
            ("Mr. Utterson", "And now."), ("narration", "as soon as Poole had left them."),
            ("Mr. Utterson", "you have heard?")]
    story = Story(title="t", characters=[Character(name="Mr. Utterson")],
                  actions=[Action(index=i + 1, character=c, text=t) for i, (c, t) in enumerate(acts)])
    assert aa.place_actions(story, text) == [0, 1, 1, 1]


def test_tag_narration_before_its_speech_stays_in_the_paragraph():
    aa = _benchmark()
    text = "Nobody spoke.\n\n“Go,” she said, turning.\n\nThey went.\n"
    acts = [("narration", "Nobody spoke."), ("narration", "turning."), ("Her", "Go."),
            ("narration", "They went.")]
    story = Story(title="t", characters=[Character(name="Her")],
                  actions=[Action(index=i + 1, character=c, text=t) for i, (c, t) in enumerate(acts)])
    assert aa.place_actions(story, text) == [0, 1, 1, 2]
