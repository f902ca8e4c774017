"""Presence accuracy: who the app believes is on stage, against a careful reading.

For every play of the gold set (`benchmarks/gold/presence/`, see its README.md; with `--gold
presence_prose`, every novel excerpt of `benchmarks/gold/presence_prose/`), the text is
imported as a user's upload would be (`load_story`, format auto-detected), presence is
derived by the app's own code (`derive` → `to_ranges`, what the store keeps; a novel read as
prose), and each labelled point is compared with the gold set of characters present.

How a point finds its action. The stored storyline has lost the source's layout (italic
markers, wrapped lines, brackets, footnote markers), so both are compared in a *key* form:
no `_`, no footnote markers (`[107]`, `<2>`), no brackets or parentheses, single spaces.
Every action is located in the source in story order (its first words found after the
previous action's), and a point belongs to the action whose located start is the last one
at or before the anchor — provided the anchor's words are in that action's text (else the
point is a miss: "not in the storyline"). An anchor inside a direction that the importer
kept inside a speech therefore scores that speech; an anchor spanning a speaker's
parenthetical direction and the spoken words is looked for by its spoken words.

How names are compared. Each imported character (name and aliases) is mapped to the gold
name whose forms (the cast file: labels, persons-list entry, names in the text) include one
of its keys, compared without case, `_` and final full stops. A present character that maps
to no gold name counts against precision.

Printed: per play and per split, exact-match rate per point (present set == gold set),
character precision and recall (micro, over points), then the target line for the test
split. `--verbose` lists the misses of the tune plays (never of the test plays: the rules
are not tuned on them); `--by-character` counts, per play, the points where each character
was wrongly present or wrongly absent.

    python benchmarks/presence_accuracy.py [--plays hamlet earnest] [--verbose]
    python benchmarks/presence_accuracy.py --gold presence_prose   # novel chapters
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

from bookmarks.errors import StoryFormatError
from bookmarks.stories.importers import load_story
from bookmarks.stories.presence import PROSE, derive, to_ranges
from bookmarks.stories.story import NARRATION, Story

GOLD = Path(__file__).resolve().parent / "gold" / "presence"
TARGET = 0.95

_FOOTNOTE = re.compile(r"\[\d+\]|<\d+>")
_MARKUP = re.compile(r"[\[\](){}]")


def key(text: str) -> str:
    """Text without layout and markup, for locating anchors in the storyline."""
    return keyed_with_positions(text)[0]


def keyed_with_positions(text: str) -> tuple[str, list[int]]:
    """The text without `_`, footnote markers and brackets, with single spaces and none
    before punctuation; and, for each of its characters, the offset in `text` it came from."""
    out: list[str] = []
    pos: list[int] = []
    clean = _FOOTNOTE.sub(lambda m: " " * len(m.group()), text)
    clean = _MARKUP.sub(" ", clean)
    space = True
    for i, ch in enumerate(clean):
        if ch == "_":
            continue
        if ch.isspace():
            if not space:
                out.append(" ")
                pos.append(i)
            space = True
            continue
        if ch in ".,;:!?" and out and out[-1] == " ":
            out.pop()
            pos.pop()
        out.append(ch)
        pos.append(i)
        space = False
    if out and out[-1] == " ":
        out.pop()
        pos.pop()
    return "".join(out), pos


def name_key(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).strip(" .:").casefold()


@dataclass
class Result:
    slug: str
    points: int = 0
    exact: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    not_found: int = 0
    wrong_speaker: int = 0
    fmt: str = ""
    actions: int = 0
    characters: int = 0
    misses: list[dict] = field(default_factory=list)
    wrong: dict[str, list[int]] = field(default_factory=dict)  # character → [extra, missing]
    names: dict[str, str] = field(default_factory=dict)  # imported character → gold name

    def add(self, other: Result) -> None:
        for f in ("points", "exact", "tp", "fp", "fn", "not_found", "wrong_speaker"):
            setattr(self, f, getattr(self, f) + getattr(other, f))

    @property
    def rate(self) -> float:
        return self.exact / self.points if self.points else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def gold_names(cast: dict[str, list[str]]) -> dict[str, str]:
    """Every form (key) → the gold name."""
    forms: dict[str, str] = {}
    for name, variants in cast.items():
        for form in [name, *variants]:
            forms.setdefault(name_key(form), name)
    return forms


def name_map(story: Story, cast: dict[str, list[str]]) -> dict[str, str]:
    """Imported character → gold name (or `?name` when none fits)."""
    forms = gold_names(cast)
    out = {}
    for c in story.characters:
        hits = [forms[name_key(k)] for k in c.keys() if name_key(k) in forms]
        out[c.name] = hits[0] if hits else f"?{c.name}"
    return out


def locate(story: Story, source: str) -> tuple[list[int], str, list[int]]:
    """The start of every action in the keyed source (story order), the keyed source and
    its offsets in the raw source."""
    keyed, pos = keyed_with_positions(source)
    starts: list[int] = []
    cursor = 0
    for a in story.actions:
        words = key(a.text).split()
        found = -1
        window = 4000 + 2 * len(a.text)  # near the last one: a short line (`No.`) is found
        # again and again further on, and a match there would lose every action between
        for lo in range(0, max(1, len(words) - 2), 3):
            for n in (8, 5, 3):
                chunk = " ".join(words[lo:lo + n])
                if len(chunk) < 8 and len(words) > n:
                    continue
                at = keyed.find(chunk, cursor, cursor + window)
                if at >= 0:
                    found = at
                    break
            if found >= 0:
                break
        start = found if found >= 0 else (starts[-1] if starts else 0)
        starts.append(start)
        cursor = max(cursor, start + 1) if found >= 0 else cursor
    return starts, keyed, pos


def stage(ranges: dict[str, list[tuple[int, int]]], index: int) -> set[str]:
    return {name for name, runs in ranges.items() if any(a <= index <= b for a, b in runs)}


def evaluate(slug: str, keep_misses: bool = False, gold: Path = GOLD) -> Result:
    """Score one gold play (or novel excerpt, from `gold`)."""
    path = gold / f"{slug}.txt"
    cast = json.loads((gold / f"{slug}.cast.json").read_text("utf-8"))
    labels = [json.loads(line) for line in (gold / f"{slug}.labels.jsonl").read_text("utf-8")
              .splitlines() if line.strip()]
    result = Result(slug)
    try:
        story = load_story(path)
    except StoryFormatError as exc:  # refused: every point is a miss
        result.points = result.not_found = len(labels)
        result.fn = sum(len(label["present"]) for label in labels)
        result.fmt = f"refused: {exc}"[:90]
        return result
    result.fmt, result.actions, result.characters = (story.source_format, len(story.actions),
                                                     len(story.characters))
    ranges = to_ranges(derive(story.actions, story.characters, prose=story.source_format in PROSE))
    names = name_map(story, cast)
    counts = story.action_counts()
    result.names = {(f"{c.name} ({', '.join(c.aliases)})" if c.aliases else c.name)
                    + f" {counts.get(c.name, 0)} lines": names[c.name] for c in story.characters}
    forms = gold_names(cast)
    source = path.read_text("utf-8")
    starts, keyed, pos = locate(story, source)
    for label in labels:
        result.points += 1
        gold = set(label["present"])
        raw_at = source.index(label["anchor"])
        at = bisect_right(pos, raw_at)
        k = bisect_right(starts, at) - 1
        pieces = [p for p in re.split(r"\([^)]*\)|\[[^\]]*\]", label["anchor"]) if key(p)]
        words = max((key(p) for p in pieces), key=len) if pieces else key(label["anchor"])
        # a speech joined from quotations around a tag (`“Hyde?” repeated Lanyon. “No. Never
        # …”`) may be located by its later words: the anchor is then in the next action
        k = next((j for j in (k, k + 1, k - 1) if 0 <= j < len(story.actions)
                  and words in key(story.actions[j].text)), k)
        action = story.actions[k] if k >= 0 else None
        if action is None or words not in key(action.text):
            result.not_found += 1
            predicted: set[str] = set()
            why = "not in the storyline"
        else:
            predicted = {names.get(n, f"?{n}") for n in stage(ranges, action.index)}
            why = ""
            if label["speaker"]:
                want = forms.get(name_key(label["speaker"]))
                if action.character == NARRATION or names.get(action.character) != want:
                    result.wrong_speaker += 1
                    why = f"speech given to {action.character}"
        for name in predicted ^ gold:
            result.wrong.setdefault(name, [0, 0])[name in gold] += 1
        result.tp += len(predicted & gold)
        result.fp += len(predicted - gold)
        result.fn += len(gold - predicted)
        if predicted == gold:
            result.exact += 1
        elif keep_misses:
            result.misses.append({
                "anchor": label["anchor"], "case": label["case"], "speaker": label["speaker"],
                "gold": sorted(gold), "app": sorted(predicted), "why": why,
                "action": f"{action.index} {action.character}: {action.text[:100]}"
                if action else "-"})
    return result


def line(name: str, r: Result) -> str:
    return (f"{name:<20} {r.points:>4} points  exact {100 * r.rate:5.1f}%  "
            f"P {100 * r.precision:5.1f}%  R {100 * r.recall:5.1f}%"
            + (f"  (not found {r.not_found})" if r.not_found else "")
            + (f"  (wrong speaker {r.wrong_speaker})" if r.wrong_speaker else ""))


def main(argv: list[str] | None = None) -> dict[str, Result]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plays", nargs="*", help="only these gold plays (or texts)")
    parser.add_argument("--gold", default="presence",
                        help="the gold set: presence (plays, the default) or presence_prose (novels)")
    parser.add_argument("--verbose", action="store_true", help="list the misses (tune plays)")
    parser.add_argument("--by-character", action="store_true",
                        help="per play, how often each character was wrongly present / absent")
    args = parser.parse_args(argv)
    gold = GOLD.parent / args.gold
    if not (gold / "split.json").is_file():
        parser.error(f"{gold}: no split.json (a gold set folder under benchmarks/gold/)")
    split = json.loads((gold / "split.json").read_text("utf-8"))
    results: dict[str, Result] = {}
    for part in ("tune", "test"):
        total = Result(part)
        chosen = [s for s in split[part] if not args.plays or s in args.plays]
        for slug in chosen:
            r = evaluate(slug, keep_misses=args.verbose and part == "tune", gold=gold)
            results[slug] = r
            total.add(r)
            print(line(slug, r) + f"  [{r.fmt}, {r.actions} actions, {r.characters} characters]")
            if args.by_character:
                print("    cast: " + "; ".join(f"{k} → {v}" for k, v in r.names.items()))
            if args.by_character and r.wrong:
                print("    wrongly present / absent: " + ", ".join(
                    f"{n} {a}/{b}" for n, (a, b) in sorted(r.wrong.items(), key=lambda kv: -sum(kv[1]))))
            for m in r.misses:
                print(f"    miss [{m['case']}] {m['speaker'] or 'direction'}: {m['anchor']!r}")
                print(f"         gold {m['gold']}  app {m['app']}  {m['why']}")
                print(f"         at {m['action']}")
        if chosen:
            results[part] = total
            print(line(part.upper(), total))
            print()
    if "test" in results and gold == GOLD:
        rate = results["test"].rate
        print(f"TEST exact-match {100 * rate:.1f}% (target ≥ {100 * TARGET:.0f}%): "
              f"{'met' if rate >= TARGET else 'not met'}")
    elif "test" in results:  # the target is for plays; novels are measured
        print(f"TEST exact-match {100 * results['test'].rate:.1f}% (novels: measured, no target set)")
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
