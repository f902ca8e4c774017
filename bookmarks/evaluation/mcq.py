"""The multiple-choice benchmark (MCQ): at each question's story point the method grounds
the character, the model answers by letter, and the reply is read as a choice
(`parse_choice`: a letter alone, "the answer is B", "(C) …", or an option's own text);
accuracy overall and by question kind. Runs are stored and resumable like NAP's
(evaluate.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bookmarks.engine.ground import ground_at
from bookmarks.engine.lineage import IndexedLine, Lineage
from bookmarks.errors import BookmarksError, StructuredOutputError
from bookmarks.evaluation.evaluate import metered, scene_lines, start_run
from bookmarks.models.llm import LLM
from bookmarks.store import Store

_ALONE = re.compile(r"\(?([A-Ha-h])\)?[.:]?")
_STATED = re.compile(r"\b(?:answer(?:\s+is)?|option|choice)\s*[:\-]?\s*\(?([A-H])\b(?![\w'])",
                     re.IGNORECASE)
_LEADING = re.compile(r"^(?:\(([A-Ha-h])\)|([A-Ha-h])[).:])(?:\s|$)")


def parse_choice(reply: str, letters: list[str],
                 options: dict[str, str] | None = None) -> str | None:
    """The option a reply names in an explicit answer form — a letter alone ("B", "(b)",
    "B."), a stated answer ("Answer: B", "the answer is (C)", "option D"), a leading marked
    letter ("B) the key", "(c) because") — or by the option's own text; None when it names
    none or several (invalid, counted wrong). A sentence that merely starts with the word
    "A" ("A lighthouse keeper…") names no option."""
    text = reply.strip().strip("*").strip()
    found: set[str] = set()
    if m := _ALONE.fullmatch(text):
        found.add(m.group(1).upper())
    else:
        found |= {x.upper() for x in _STATED.findall(text)}
        if not found and (m := _LEADING.match(text)):
            found.add((m.group(1) or m.group(2)).upper())
    if not found and options:
        folded = " ".join(text.casefold().split())
        found = {k for k, v in options.items()
                 if len(v.strip()) > 2 and " ".join(v.casefold().strip(" .").split()) in folded}
    found &= set(letters)
    return found.pop() if len(found) == 1 else None


def mcq_messages(*, story: str, character: str, grounding: str, scene: list[IndexedLine],
                 question: str, options: dict[str, str]) -> list[dict[str, str]]:
    listed = "\n".join(f"{k}. {v}" for k, v in sorted(options.items()))
    parts = []
    if grounding:
        parts.append(f"What {character} remembers (story memory):\n{grounding}")
    parts.append("The scene so far:\n" + scene_lines(scene))
    parts.append(f"Question for {character}: {question}\n{listed}\n\nAnswer with the letter of "
                 "the correct option only.")
    system = (f'You are {character} in the story "{story}". Answer from what you know of the '
              "story so far.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


async def run_mcq(store: Store, llms: dict[str, LLM], story_id: int | None = None, *,
                  method: str = "bookmarks", budget: int = 3, limit: int | None = None,
                  run_id: int | None = None, knowledge: str = "omniscient",
                  use_cache: bool = True,
                  on_record: Callable[[dict, int, int], None] | None = None) -> dict:
    run = start_run(store, "mcq", story_id or 0, method,
                 {"budget": budget, "limit": limit, "knowledge": knowledge}, run_id)
    llms = metered(llms, use_cache)
    story_id, method, p = run["story_id"], run["method"], run["params"]
    story = store.story(story_id)
    questions = store.questions(story_id)[: p["limit"] or None]
    if not questions:
        raise BookmarksError(f"Story {story_id} has no multiple-choice questions; import a "
                             "NAME.questions.jsonl file next to the story.")
    cast = store.characters(story_id)
    default = next((c.name for c in cast if c.major), cast[0].name)
    lineage = Lineage.of(store, story.trunk_id)
    done = store.record_keys(run["id"])
    for n, q in enumerate(questions, start=1):
        if q.id in done:
            continue
        who = q.character or default
        extra = [IndexedLine("question", q.question, q.after + 1)]
        try:
            grounding, scene = await ground_at(store, llms["memory"], story_id=story_id,
                                               lineage=lineage, position=q.after + 1,
                                               character=who, method=method, budget=p["budget"],
                                               space=run["space"], extra_scene=extra,
                                               knowledge=p.get("knowledge", "omniscient"))
        except StructuredOutputError as exc:  # no grounding: an invalid (wrong) answer
            record = {"qid": q.id, "after": q.after, "character": who, "answer": q.answer,
                      "choice": None, "valid": False, "correct": False,
                      "reply": f"grounding failed: {exc}"[:200], "grounding": ""}
            store.add_record(run["id"], q.id, record)
            continue
        reply = await llms["actor"].text(
            mcq_messages(story=story.title, character=who, grounding=grounding.text, scene=scene,
                         question=q.question, options=q.options),
            purpose="mcq", temperature=0, max_tokens=8)
        choice = parse_choice(reply.text, sorted(q.options), q.options)
        record = {"qid": q.id, "after": q.after, "character": who, "answer": q.answer,
                  "choice": choice, "valid": choice is not None, "correct": choice == q.answer,
                  "reply": reply.text[:200], "grounding": grounding.text,
                  "witnessed": q.witnessed,
                  # a witnessed question answered with what the character never saw
                  "knew_too_much": bool(q.witnessed and q.omniscient_answer
                                        and choice == q.omniscient_answer)}
        store.commit_memory(grounding.writes)
        store.add_record(run["id"], q.id, record)
        if on_record:
            on_record(record, n, len(questions))
    records = store.records(run["id"])
    summary = {"items": len(records), "accuracy": round(100 * sum(r["correct"] for r in records)
                                                        / max(1, len(records)), 2),
               "invalid": sum(not r["valid"] for r in records)}
    witnessed = [r for r in records if r.get("witnessed")]
    if witnessed:  # faithfulness to what each character could know
        summary["witnessed_items"] = len(witnessed)
        summary["witnessed_accuracy"] = round(
            100 * sum(r["correct"] for r in witnessed) / len(witnessed), 2)
        summary["knew_too_much"] = round(
            100 * sum(r["knew_too_much"] for r in witnessed) / len(witnessed), 2)
    summary["grounding_failures"] = sum(r["reply"].startswith("grounding failed")
                                        for r in records)
    summary["model_use"] = {role: dict(llm.usage) for role, llm in llms.items()}
    store.finish_run(run["id"], summary)
    return store.run(run["id"])
