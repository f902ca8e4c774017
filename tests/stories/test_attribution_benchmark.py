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


def test_an_anchor_with_single_marks_keys_on_the_quotation_whatever_the_slug(tmp_path, monkeypatch):
    # a text that quotes in single marks, under a slug that does not say so: an anchor holding
    # the whole quotation with its marks (`‘Well,’ returned Jasper`) is keyed on the quotation's
    # words, not on the tag's (which no action holds, so the line counted as unattributed)
    aa = _benchmark()
    text = ("‘I am going out,’ said Jasper.\n\n‘Well,’ returned Jasper, ‘it will rain.’\n\n"
            "‘Nobody asked you,’ said Maud.\n")
    assert aa.single_marks(text) and not aa.single_marks(text.replace("‘", "“").replace("’", "”"))
    (tmp_path / "plain_slug.txt").write_text(text, "utf-8")
    (tmp_path / "plain_slug.labels.jsonl").write_text(
        '{"anchor": "‘Well,’ returned Jasper", "speaker": "Jasper", "case": "tag_after"}\n', "utf-8")
    (tmp_path / "plain_slug.cast.json").write_text('{"Jasper": {"gender": "m", "aliases": []}}', "utf-8")
    monkeypatch.setattr(aa, "GOLD", tmp_path)
    _, [label], _ = aa.read_gold("plain_slug")
    assert label.key == ["well"] and label.marked == "‘Well,’" and label.paragraph == 1
