"""`presence.RULES` names the presence rules: bump it whenever `derive` gives a story
another presence, so that stories stored under the older rules are read again when the
store is opened (`StoriesStore.refresh_presence`). This test fails when the presence derived
for the bundled stories, the test texts and the presence gold texts (a fixed list) changes but `RULES`
does not: then bump `RULES` and add the new fingerprint below. When an import changed
instead (the texts are read again each time) and the presence rules did not, the stored
stories' presence stands: record the new fingerprint under the same `RULES`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bookmarks.stories.importers import load_story
from bookmarks.stories.presence import PROSE, RULES, derive

ROOT = Path(__file__).resolve().parents[2]
GOLD = ROOT / "benchmarks" / "gold"
FINGERPRINTS = {  # RULES → the fingerprint of what they derive
    1: "c7b2b513de98ea6e63306c68642cff7d9e6200fea89c64d5a2ac3929c295d161",
    2: "72df5d607b95a769c69b6843ffdbef0ee23d79a1a533f9b359cdab7de99c59c3",
    3: "092bd66e718abe5dfb32392847b18e6a4030562cbda1c4d62be3e1be15fa30b4",  # imports changed
}


TEXTS = [ROOT / "stories" / name for name in (  # plays, a JSONL, Gutenberg texts, novels
    "saltmarsh_lighthouse.jsonl", "the_long_winter_at_harrowgate.txt", "the_night_ferry.txt")] + [
    ROOT / "tests" / "data" / "fog_at_gullet_point_gutenberg.txt",
    ROOT / "tests" / "data" / "lamplighters_wager_gutenberg.txt"] + [
    GOLD / "presence" / f"{name}.txt" for name in (
        "dolls_house", "earnest", "faustus", "hamlet", "othello", "proposal", "school_for_scandal")] + [
    GOLD / "presence_prose" / f"{name}.txt" for name in (
        "austen_pride_prejudice_ch01_06", "christie_styles_ch01", "doyle_scandal_in_bohemia_part1",
        "stevenson_jekyll_hyde_ch01_05", "stowe_uncle_toms_cabin_ch01_04", "wells_invisible_man_ch01_02")]


def fingerprint() -> str:
    h = hashlib.sha256()
    for path in TEXTS:
        story = load_story(path)
        per_action = derive(story.actions, story.characters, None, story.source_format in PROSE)
        h.update(path.name.encode())
        h.update(json.dumps([sorted(per_action[a.index]) for a in story.actions]).encode())
    return h.hexdigest()


def test_the_rules_version_names_what_they_derive():
    got = fingerprint()
    if FINGERPRINTS.get(RULES):
        assert FINGERPRINTS[RULES] == got, (
            f"presence.derive now gives {got[:12]}… under RULES = {RULES}: if the presence rules "
            f"changed, bump presence.RULES and add {{{RULES + 1}: {got!r}}} to FINGERPRINTS (if "
            f"only an import changed, record it under {RULES})")
    else:
        raise AssertionError(f"add {{{RULES}: {got!r}}} to FINGERPRINTS")
