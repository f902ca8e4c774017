"""An optional model-assisted pass for dialogue the rules left unattributed.

Prose and novel importers attribute a quote when the text makes the speaker clear; the
rest stays narration. This pass asks the memory model, for each narration paragraph that
holds a quote, who speaks it — among the story's cast or "unknown" — with a confidence
from 0 to 1, seeing only the paragraph and the few around it. Replies are validated (a
name of the cast, a number in range) and re-asked once if invalid; nothing the model says
is executed, and nothing is applied until the writer accepts it: suggestions are shown
first, and `apply` takes those at or above a confidence threshold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, Field

from bookmarks.errors import StructuredOutputError
from bookmarks.models.llm import LLM
from bookmarks.stories.story import NARRATION, Story

_QUOTE = re.compile(r"[\"“][^\"“”]{2,}[\"”]")
UNKNOWN = "unknown"
CONTEXT = 3  # paragraphs shown before the quote (and one after)


class Speaker(BaseModel):
    speaker: str = Field(max_length=120)
    confidence: float = Field(ge=0, le=1)


@dataclass
class Suggestion:
    index: int  # the action (paragraph) the quote is in
    text: str
    speaker: str  # a cast name, or "unknown"
    confidence: float


def candidates(story: Story) -> list[int]:
    """Indices of narration actions holding a quote (what the rules left unattributed)."""
    return [a.index for a in story.actions if a.character == NARRATION and _QUOTE.search(a.text)]


def _messages(story: Story, index: int) -> list[dict[str, str]]:
    before = story.actions[max(0, index - 1 - CONTEXT):index - 1]
    after = story.actions[index:index + 1]
    show = lambda a: f"{a.character}: {a.text[:400]}" if a.character != NARRATION \
        else f"(narration) {a.text[:400]}"  # noqa: E731
    cast = ", ".join(c.name for c in story.characters)
    user = (f'Story: "{story.title}". Characters: {cast}.\n\nBefore:\n'
            + "\n".join(show(a) for a in before)
            + f"\n\nThe paragraph:\n{story.actions[index - 1].text[:800]}\n\nAfter:\n"
            + "\n".join(show(a) for a in after)
            + "\n\nWho speaks the quoted words in the paragraph? Answer with one name from the "
              f'characters, or "{UNKNOWN}", and your confidence from 0 to 1.')
    return [{"role": "system", "content": "You attribute dialogue in stories. Use only what the "
             "text says; if it does not make the speaker clear, say unknown."},
            {"role": "user", "content": user}]


async def suggest(llm: LLM, story: Story, *, limit: int = 200) -> list[Suggestion]:
    """A suggestion per unattributed quote (at most `limit`), in story order."""
    names = {k.casefold(): c.name for c in story.characters for k in c.keys()}

    def check(value: Speaker) -> None:
        if value.speaker.strip().casefold() not in names and \
                value.speaker.strip().casefold() != UNKNOWN:
            raise ValueError(f'speaker must be one of the characters or "{UNKNOWN}"')

    out = []
    for index in candidates(story)[:limit]:
        try:
            reply = await llm.structured(_messages(story, index), Speaker,
                                         purpose="import:attribute", max_tokens=40, check=check)
        except StructuredOutputError:
            continue  # no usable answer: the paragraph stays narration
        who = names.get(reply.speaker.strip().casefold(), UNKNOWN)
        out.append(Suggestion(index, story.actions[index - 1].text, who,
                              0.0 if who == UNKNOWN else round(reply.confidence, 2)))
    return out


def apply(story: Story, suggestions: list[Suggestion], min_confidence: float = 0.7) -> Story:
    """The story with the accepted suggestions' paragraphs given to their speakers."""
    chosen = {s.index: s for s in suggestions
              if s.speaker != UNKNOWN and s.confidence >= min_confidence}
    actions = [a.model_copy(update={  # a writer may check the model's word like a rule's
        "character": chosen[a.index].speaker,
        "check": f"the model's suggestion ({chosen[a.index].confidence:.2f})"})
        if a.index in chosen else a for a in story.actions]
    return story.model_copy(update={"actions": actions})
