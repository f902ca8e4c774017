"""How well the prose importers attribute quoted dialogue, on the hand-labelled gold set in
benchmarks/gold/attribution/ (see its README.md).

Each gold text is imported with the app's own importer (`load_story`, format auto-detected),
without a model. Every labelled quotation is mapped to the action that holds it, and that
action's character through the imported cast (name and aliases) to the gold cast. Reported
per text and per split:

* attributed: share of quoted paragraphs (paragraphs holding speech) where the importer gave
  a speaker to at least one quotation;
* precision: share of attributed paragraphs whose every attributed quotation has the right
  speaker (a paragraph of scare quotes only that was made speech counts as attributed, and
  wrong);
* end to end: share of speech quotations that end with the right speaker;
* not-speech made speech: scare quotes, titles and notes given a speaker.

    python benchmarks/attribution_accuracy.py [--verbose] [--only SLUG ...] [--held-out [DIR]]

`--verbose` lists every miss; use it on the tune texts only. `--held-out [DIR]` scores the
texts of a held-out folder instead (default benchmarks/gold/attribution_heldout/; the
second and third, benchmarks/gold/attribution_heldout2/ and attribution_heldout3/, the
newest): labelled by someone who never saw the
rules, never used to tune or to choose between rules — a folder scored once and then
looked into is a diagnostic set from then on (its README says so).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bookmarks.stories.dialogue import NARRATOR  # noqa: E402
from bookmarks.stories.importers import load_story  # noqa: E402
from bookmarks.stories.story import NARRATION, Story  # noqa: E402

GOLD = ROOT / "benchmarks" / "gold" / "attribution"
HELD_OUT = ROOT / "benchmarks" / "gold" / "attribution_heldout"
TARGET_ATTRIBUTED, TARGET_PRECISION = 0.80, 0.95
_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(text.replace("_", " "))]


def import_text(path: Path) -> tuple[Story, str]:
    """The story as the app imports it (a copy that keeps a START marker but lost its END
    marker is read to its last line)."""
    return load_story(path), ""


# --- the gold file: paragraphs, quotation keys ----------------------------------------------


@dataclass
class Label:
    anchor: str
    speaker: str | None
    case: str
    paragraph: int = -1
    key: list[str] = field(default_factory=list)
    marked: str = ""  # the whole quotation with its marks, when the anchor holds it
    found: str | None = None  # the gold name the importer's speaker maps to, or NARRATION
    raw: str = NARRATION  # the importer's character
    check: str | None = None  # why the import says to check its speaker (Action.check)


def paragraphs_of(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the blank-line separated paragraphs."""
    spans, start, pos = [], None, 0
    for line in text.splitlines(keepends=True):
        if line.strip() and start is None:
            start = pos
        elif not line.strip() and start is not None:
            spans.append((start, pos))
            start = None
        pos += len(line)
    if start is not None:
        spans.append((start, pos))
    return spans


def _marks(single: bool) -> tuple[str, str]:
    return ("'‘’", "'‘’") if single else ("\"“", "\"”")


def quote_key(text: str, at: int, anchor: str, single: bool) -> tuple[int, list[str], str]:
    """Where the labelled quotation is and the words that identify it: the anchor's words,
    or, when the anchor holds a whole quotation with its marks, that quotation's words."""
    opens, closes = _marks(single)
    end = at + len(anchor)
    for i in range(at, end):
        ch = text[i]
        before = text[i - 1] if i else " "
        if ch in opens and (before.isspace() or before in "—-([_") and not text[i + 1].isspace():
            for j in range(i + 1, end):
                after = text[j + 1] if j + 1 < len(text) else " "
                if text[j] in closes and not text[j - 1].isspace() and not after.isalpha():
                    return i, tokens(text[i + 1:j]), " ".join(text[i:j + 1].split())
    return at, tokens(anchor), ""


def single_marks(text: str) -> bool:
    """The text quotes speech in single marks (`‘Well,’ returned Jasper`): more quotations
    open with a single mark than with a double one (a slug saying `single_quotes` says so too)."""
    singles = text.count("‘") + len(re.findall(r"(?:^|(?<=\s))'(?=\w)", text, re.M))
    doubles = text.count("“") + len(re.findall(r'(?:^|(?<=\s))"(?=\w)', text, re.M))
    return singles > doubles


def read_gold(slug: str) -> tuple[str, list[Label], dict]:
    text = (GOLD / f"{slug}.txt").read_text("utf-8")
    labels = [Label(**json.loads(ln)) for ln in (GOLD / f"{slug}.labels.jsonl").read_text("utf-8")
              .splitlines() if ln.strip()]
    cast = json.loads((GOLD / f"{slug}.cast.json").read_text("utf-8"))
    single = "single_quotes" in slug or single_marks(text)
    spans = paragraphs_of(text)
    for label in labels:
        at = text.index(label.anchor)
        pos, label.key, label.marked = quote_key(text, at, label.anchor, single)
        label.paragraph = next(k for k, (s, e) in enumerate(spans) if s <= pos < e)
    return text, labels, cast


# --- actions → paragraphs --------------------------------------------------------------------


def _subsequence_span(needle: list[str], hay: list[str], start: int) -> tuple[int, int] | None:
    """(position of needle[0], position after its last word) when needle is a subsequence of
    hay[start:], else None."""
    first = None
    i = start
    for word in needle:
        while i < len(hay) and hay[i] != word:
            i += 1
        if i == len(hay):
            return None
        first = i if first is None else first
        i += 1
    return (start, start) if first is None else (first, i)


def _subsequence(needle: list[str], hay: list[str], start: int) -> int | None:
    """Position of needle[0] when needle is a subsequence of hay[start:], else None."""
    span = _subsequence_span(needle, hay, start)
    return None if span is None else span[0]


def place_actions(story: Story, text: str) -> list[int]:
    """The gold paragraph each action comes from (-1 where none is found), in story order.
    An action is looked for after where the one before it ends, not after where it starts:
    a short speech (`And now.`) is otherwise found among the words of the long narration
    before it."""
    paras = [tokens(text[s:e]) for s, e in paragraphs_of(text)]
    where: list[int] = []
    cur_p, cur_end = 0, 0
    told = {tuple(tokens(t)) for t in (story.title, story.author, f"by {story.author}", "by") if t}
    while cur_p < len(paras) and paras[cur_p] and tuple(paras[cur_p]) in told:
        cur_p += 1  # the title and by-line the import read as such (no action comes from them)
    for action in story.actions:
        words = tokens(action.text)
        found = -1
        # after the last action in its paragraph; in the next paragraph; reordered within
        # the paragraph (a tag's narration placed before its speech); in a later paragraph
        tries = [(cur_p, cur_end), (cur_p + 1, 0), (cur_p, 0),
                 *((p, 0) for p in range(cur_p + 2, len(paras)))]
        for p, start in tries:
            if p < len(paras) and (span := _subsequence_span(words, paras[p], start)) is not None:
                found, cur_p, cur_end = p, p, span[1]
                break
        where.append(found)
    return where


def _contains(hay: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def _fold(name: str) -> str:
    name = re.sub(r"[.’']", "", name.casefold())
    name = re.sub(r"^(?:the|a|an)\s+", "", " ".join(name.split()))
    return name


def gold_name(story: Story, character: str, cast: dict) -> str:
    """The gold cast member an imported character is (or the imported name, unmatched)."""
    lookup: dict[str, str] = {}
    for name, info in cast.items():
        for key in [name, *info.get("aliases", [])]:
            lookup.setdefault(_fold(key), name)
    member = story.character(character)
    keys = [character, *(member.aliases if member else [])]
    if character == NARRATOR:  # the importer's unnamed first-person narrator is the one
        keys.append("I")  # whom the gold cast gives the alias "I"
    for key in keys:
        if _fold(key) in lookup:
            return lookup[_fold(key)]
    return f"?{character}"


def resolve(story: Story, text: str, labels: list[Label], cast: dict) -> None:
    where = place_actions(story, text)
    by_para: dict[int, list[int]] = {}
    for i, p in enumerate(where):
        by_para.setdefault(p, []).append(i)
    for label in labels:
        cands = by_para.get(label.paragraph, [])
        words = [tokens(story.actions[i].text) for i in cands]
        pick = next((i for i in cands if label.marked and label.marked in story.actions[i].text), None)
        if pick is None:  # a quotation left in narration keeps its marks; speech does not
            pick = next((i for i, w in zip(cands, words, strict=True) if _contains(w, label.key)), None)
        if pick is None:
            pick = next((i for i, w in zip(cands, words, strict=True)
                         if _subsequence(label.key, w, 0) is not None), None)
        if pick is None:
            label.found = None
            continue
        label.raw = story.actions[pick].character
        label.check = story.actions[pick].check
        label.found = NARRATION if label.raw == NARRATION else gold_name(story, label.raw, cast)


# --- scoring ---------------------------------------------------------------------------------


@dataclass
class Score:
    quoted: int = 0  # paragraphs holding speech
    attributed: int = 0  # paragraphs with any quotation given a speaker
    right: int = 0  # attributed paragraphs whose every given speaker is right
    speech: int = 0  # speech quotations
    speech_right: int = 0
    not_speech: int = 0
    not_speech_made: int = 0
    unmapped: int = 0
    speakers: int = 0  # gold characters given a line
    split: int = 0  # of those, given lines under two imported characters or more
    checked: int = 0  # attributed paragraphs the import marks for checking (Action.check)
    checked_right: int = 0

    def add(self, other: Score) -> None:
        for k in self.__dataclass_fields__:
            setattr(self, k, getattr(self, k) + getattr(other, k))

    def line(self) -> str:
        pct = lambda a, b: f"{100 * a / b:5.1f}%" if b else "    –"  # noqa: E731
        return (f"attributed {pct(self.attributed, self.quoted)} of {self.quoted:3d} quoted paragraphs"
                f" | precision {pct(self.right, self.attributed)}"
                f" | end to end {pct(self.speech_right, self.speech)} of {self.speech:3d} quotations"
                f" | not-speech made speech {self.not_speech_made}/{self.not_speech}"
                + (f" | unmapped {self.unmapped}" if self.unmapped else "")
                + f" | split {self.split}/{self.speakers} characters")

    def check_line(self) -> str:
        """How well the import's marks for checking single out its wrong speakers."""
        pct = lambda a, b: f"{100 * a / b:5.1f}%" if b else "    –"  # noqa: E731
        sure, wrong = self.attributed - self.checked, self.attributed - self.right
        return (f"to check {pct(self.checked, self.attributed)} of attributed, right "
                f"{pct(self.checked_right, self.checked)} | not marked right "
                f"{pct(self.right - self.checked_right, sure)} | wrong ones marked "
                f"{pct(self.checked - self.checked_right, wrong)} of {wrong}")


def score(labels: list[Label]) -> Score:
    s = Score()
    groups: dict[int, list[Label]] = {}
    for label in labels:
        groups.setdefault(label.paragraph, []).append(label)
        s.unmapped += label.found is None
        if label.speaker is None:
            s.not_speech += 1
            s.not_speech_made += label.found not in (None, NARRATION)
        else:
            s.speech += 1
            s.speech_right += label.found == label.speaker
    imported: dict[str, set[str]] = {}  # gold character → the imported names of their lines
    for label in labels:
        if label.found not in (None, NARRATION) and not label.found.startswith("?"):
            imported.setdefault(label.found, set()).add(label.raw)
    s.speakers, s.split = len(imported), sum(len(v) > 1 for v in imported.values())
    for group in groups.values():
        given = [lb for lb in group if lb.found not in (None, NARRATION)]
        s.quoted += any(lb.speaker for lb in group)
        if given:
            s.attributed += 1
            right = all(lb.found == lb.speaker for lb in given)
            s.right += right
            if any(lb.check for lb in given):
                s.checked += 1
                s.checked_right += right
    return s


def misses(slug: str, labels: list[Label]) -> list[str]:
    out = []
    for label in labels:
        if label.found == label.speaker or (label.speaker is None and label.found in (None, NARRATION)):
            continue
        kind = "unattributed" if label.found in (None, NARRATION) else "WRONG"
        out.append(f"  {slug} ¶{label.paragraph} [{label.case}] {kind}: gold {label.speaker!r}, "
                   f"got {label.raw!r} → {label.found!r}: {label.anchor!r}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="list every miss (tune texts only)")
    parser.add_argument("--only", nargs="*", help="these slugs only")
    parser.add_argument("--held-out", nargs="?", const=str(HELD_OUT), default="",
                        metavar="DIR",
                        help="score a held-out folder (default benchmarks/gold/attribution_"
                             "heldout; every text labelled by someone who never saw the rules) "
                             "as the test split")
    args = parser.parse_args()
    global GOLD
    if args.held_out:
        GOLD = Path(args.held_out).resolve()
        split = {"tune": [], "test": sorted(p.name.removesuffix(".labels.jsonl")
                                            for p in GOLD.glob("*.labels.jsonl"))}
    else:
        split = json.loads((GOLD / "split.json").read_text("utf-8"))
    met = None
    for part in ("tune", "test"):
        slugs = [s for s in split[part] if not args.only or s in args.only]
        if not slugs:
            continue
        print(f"== {part.upper()}")
        total = Score()
        for slug in slugs:
            text, labels, cast = read_gold(slug)
            story, note = import_text(GOLD / f"{slug}.txt")
            resolve(story, text, labels, cast)
            s = score(labels)
            total.add(s)
            print(f"{slug:40s} [{story.source_format}{note}]\n    {s.line()}")
            if args.verbose:
                print("\n".join(misses(slug, labels)))
        print(f"{part.upper():40s}\n    {total.line()}\n    {total.check_line()}")
        if part == "test":
            att = total.attributed / total.quoted if total.quoted else 0.0
            prec = total.right / total.attributed if total.attributed else 0.0
            met = att >= TARGET_ATTRIBUTED and prec >= TARGET_PRECISION
            print(f"TEST: {100 * att:.1f}% of quoted paragraphs attributed at {100 * prec:.1f}% "
                  f"precision (target ≥ {TARGET_ATTRIBUTED:.0%} at ≥ {TARGET_PRECISION:.0%}): "
                  f"{'met' if met else 'not met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
