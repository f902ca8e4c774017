"""Who is in the scene, and the narration that leads into a line, for the stricter speaker
rules (mixed into `attribution_rules.StrictResolver`):

- **The scene's people.** The people the chapter's last paragraphs name and who of them
  spoke; unknown when someone the cast does not know is there (`a red-faced man`).
- **The one person of a sex.** `he`/`she` with no antecedent near, where the scene names
  one person of that sex, is that person; a first-person narrator is `I`, never `he`/`she`.
- **Two alone.** A man and a woman alone: an untagged line after narration is the one who
  did not speak last, unless the narration is about the last speaker.
- **A beat leads into a line.** A short narration paragraph about one speaker's doing
  (`He lifted up the sable waves of hair …`, `She nodded.`) introduces that speaker's
  untagged line, and a first-person narrator's doings lead into no line of theirs.
Where they are unsure, the line stays narration.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribution_context import blank_quotes, main_subjects, pronoun_gender
from bookmarks.stories.attribution_turns import _ANSWER, _TIME_MOVES
from bookmarks.stories.tags import ABBREVIATIONS, PERSON_NOUNS, VERB_WORD

_PERSON = re.compile(rf"\b(?:{'|'.join(sorted(PERSON_NOUNS))})$", re.I)
_TITLED_NAME = re.compile(rf"\b(?:{ABBREVIATIONS})\.?\s+[A-Z]\w+")
_FACE_OF = re.compile(r"((?:[A-Z][\w.]*\s+)*[A-Z]\w+)[’']s\s+(?:[a-z]+\s+){0,2}?"
                      r"(?:face|eyes|cheeks?|lips|brow|forehead|features|countenance)\b")
BEAT_WORDS = 60  # a narration paragraph this long or shorter may introduce a line
SCENE = 20  # paragraphs back in which `he`/`she` may find the one person of that sex named
_UNNAMED = {g: re.compile(r"\b(?:[Aa]n?|[Tt]he|[Aa]nother|[Oo]ne|[Tt]his|[Tt]hat|[Hh]is|[Hh]er)\s+"
                          r"(?:[\w-]+\s+){0,2}?(?:" + nouns + r")s?\b")
            for g, nouns in {
                "m": "man|gentleman|boy|lad|youth|fellow|chap|husband|son|brother|father|uncle|"
                     "nephew|king|prince|lord|sailor|servant|waiter|porter|driver|clerk|butler",
                "f": "woman|lady|girl|lass|maid|maiden|wife|daughter|sister|mother|aunt|niece|"
                     "queen|princess|widow|housekeeper|landlady|governess|nurse|servant"}.items()}


class SceneRules:
    def _beat(self, pi: int) -> str | None:
        """`He lifted up the sable waves of hair …` ¶ `"Now, ma'am, am I a fool?"`: a short
        narration paragraph every main clause of which is about one person (by name, or
        `he`/`she` when one of the two talking, or else the one person of the scene, is of
        that sex) introduces that person's untagged line — unless it is their answer (`I
        said nothing.`: the other speaks next) or the line calls them by name. A gesture
        (`She nodded.`, `He smiled.`) leads into a line like any other doing: on the gold
        sets it did far more often than it was a whole answer (`Mr. Darcy bowed.`)."""
        if not pi or (prev := self.paras[pi - 1]).chapter != self.paras[pi].chapter or prev.quotes \
                or len(prev.text.split()) > BEAT_WORDS or _ANSWER.search(prev.text):
            return None
        people, pair = self._scene_people(pi - 1), set(self.recent[-2:])
        who, last = set(), None
        for at, subject in reversed(main_subjects(prev.text)):  # in reading order
            if subject == "I":  # `I nodded.`, `I sat up at that`: a first-person narrator
                who.add(None)  # tells what they did while others talk — no lead into a line
            elif (g := pronoun_gender(subject)) in ("m", "f"):
                if last and self.cast.gender(last) == {g}:  # `Philippe sat thoughtful a
                    who.add(last)  # moment. Then he returned to the attack.`
                    continue
                fits = {n for n in pair if self.cast.gender(n) == {g}}  # the one of the two talking
                if len(fits) != 1:  # else the one person of that sex the scene names
                    fits = {n for n in people[0] if self.cast.gender(n) == {g}} if people else set()
                who.add(fits.pop() if len(fits) == 1 else None)
            elif (found := self.cast.lookup(subject)) is None and (owner := self._owner(prev.text, at)):
                who.add(last := owner)  # `Mary Leavenworth's violet eyes opened`
            else:
                who.add(last := found)
        if len(who) != 1 or None in who:
            return None
        actor = who.pop()
        if any(actor in self.addressed(q.text) | {n for _, _, n, _ in self.cast.mentions(q.text)}
               for q in self.paras[pi].quotes if q.speech):
            return None  # the line calls them, or speaks of them (`"I'm afraid Molly isn't …"`)
        return actor

    def _owner(self, text: str, at: int) -> str | None:
        """The one whose face or eyes are the subject at `at` (`Mary Leavenworth's violet eyes
        opened wonderingly.`); None for anything else of theirs (`Tom's brother`)."""
        m = _FACE_OF.match(text, at)
        return self.cast.lookup(m.group(1)) if m else None

    def _scene_people(self, pi: int, sex: str | None = None) -> tuple[set[str], set[str]] | None:
        """(named, spoke): the people the chapter's last SCENE paragraphs name and those of
        them who spoke there; None when the scene has someone the cast does not know
        (`a red-faced man`; with `sex`, only someone of that sex: a stranger who is a man
        leaves the one woman the one `she`) or someone of no known sex."""
        chapter, named, spoke = self.paras[pi].chapter, set(), set()
        for back in range(0, SCENE + 1):
            if pi - back < 0 or self.paras[pi - back].chapter != chapter:
                break
            p = self.paras[pi - back]
            named |= {n for _, n, _ in self.events[pi - back]}
            spoke |= {n for n in p.speakers if n}
            text = blank_quotes(p)
            if any(self.cast.lookup(m.group(0)) is None
                   for g in ((sex,) if sex else ("m", "f")) for m in _UNNAMED[g].finditer(text)):
                return None
            if back <= 1 and any(self.cast.lookup(m.group(0)) is None for m in _TITLED_NAME.finditer(text)):
                return None  # `Then the door opened and Dr. Lamb came in`
        named |= spoke
        named.discard(None)
        if any(len(self.cast.gender(n)) != 1 for n in named if n != self.narrator):
            return None  # the narrator is "I", never `he`/`she`: their sex may stay unknown
        return named, spoke

    def _two_alone_next(self, pi: int) -> str | None:
        """A man and a woman alone (the scene names no one else, both have spoken there):
        an untagged line after a narration paragraph is the one who did not speak last,
        unless that narration's last sentence is about the last speaker (who may go on).
        `"…!" she repeated.` ¶ `He declared himself at her disposal: …` ¶ `"Shall we go …?"`"""
        if not pi or self.paras[pi - 1].chapter != self.paras[pi].chapter or self.paras[pi - 1].quotes \
                or _TIME_MOVES.search(self.paras[pi - 1].text) or not (people := self._scene_people(pi - 1)):
            return None  # (`Some days later …`: no turn of the talk before)
        named, spoke = people
        if len(named) != 2 or spoke != named:
            return None
        a, b = sorted(named)
        if self.cast.gender(a) == self.cast.gender(b):
            return None
        last = next((s for back in range(1, SCENE + 1) if pi - back >= 0
                     for s in reversed(self.paras[pi - back].speakers) if s), None)
        if last not in named:
            return None
        other = b if last == a else a
        found = main_subjects(self.paras[pi - 1].text)
        if found:
            _, subject = found[0]  # the last clause's subject
            if subject == "I":
                return None  # `I put down my work.`: what the narrator did says nothing of who
            g = pronoun_gender(subject)
            said = ({n for n in named if self.cast.gender(n) == {g}} if g in ("m", "f")
                    else {self.cast.lookup(subject)})
            if last in said or (g is None and said != {other} and re.search(_PERSON, subject)):
                return None  # about the last speaker: she may go on
            if said == {other} and _ANSWER.search(blank_quotes(self.paras[pi - 1])):
                return None  # `Mr. Crowe answered that he would walk.`: his answer, her turn
        return other

    def _actor(self, pi: int) -> str | None:
        """`Harriet looked up from her book.` ¶ `"…"`: with no exchange running, a short
        narration paragraph whose one named person is its subject gives them the next line."""
        p = self.paras[pi]
        if self.recent or p.quotes or len(p.text.split()) > 40 or pi and any(self.paras[pi - 1].speakers):
            return None
        named = {n for _, _, n, _ in self.cast.mentions(p.text)}
        subjects = [self.cast.lookup(s) for _, s in main_subjects(p.text)]
        if len(named) != 1 or not subjects or any(s is None for s in subjects) or set(subjects) != named \
                or VERB_WORD.search(p.text):  # `Lucy said that this was kind`: she has spoken
            return None
        actor = named.pop()
        if _PERSON.search(p.text.split(".")[0]) or any(actor in self.addressed(q.text) for q in
                                                        self.paras[pi + 1].quotes if q.speech):
            return None  # `"Tut, tut! Miss Lucy!"` is not Lucy's
        return actor

    def _sole_of_sex(self, g: str, pi: int) -> str | None:
        """`he`/`she` with no antecedent near, in a scene where the text has named only one
        person of that sex (`Selden` and Miss Bart alone over tea: every `she said` is hers):
        of the people the scene names (`_scene_people`), exactly one is of this sex."""
        if not (people := self._scene_people(pi, g)):
            return None
        fits = {n for n in people[0] if self.cast.gender(n) == {g}}
        if len(fits) == 1:
            self.stage = "sole"
            return fits.pop()
        return None
