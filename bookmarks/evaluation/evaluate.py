"""Benchmarks on a story: next-action prediction (NAP) with a five-dimension judge and
Best@k, and efficiency by progress bucket (the multiple-choice benchmark is in mcq.py, on
the same runs).

Runs are stored (`eval_runs`, one `eval_records` row per item) and resumable: running
again with the same run id skips the items already recorded and continues with the
memory space the run had.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Literal

from pydantic import BaseModel

from bookmarks.engine.actor import Line, act, fallback_event
from bookmarks.engine.ground import ground_at
from bookmarks.engine.joint_sync import resolve_mode
from bookmarks.engine.lineage import IndexedLine, Lineage
from bookmarks.engine.prompts import clip
from bookmarks.engine.tasks import gather_all
from bookmarks.errors import BookmarksError, NoUsableLineError, StructuredOutputError
from bookmarks.evaluation.walk import eligible_points, spread
from bookmarks.models.llm import LLM, model_identity
from bookmarks.store import Store

DIMENSIONS = ("emotion", "intent", "causality", "position", "content")
YesNo = Literal["yes", "no"]


class Judgement(BaseModel):
    emotion: YesNo
    intent: YesNo
    causality: YesNo
    position: YesNo
    content: YesNo


JUDGE_SYSTEM = ("You compare a predicted action of a story character with the action the "
                "character really took. Judge each dimension on its own.")


def scene_lines(scene: list[IndexedLine]) -> str:
    """A scene's lines for a judge or MCQ prompt, each clipped (marked) so that no single
    line can take the prompt's room: the request's last-resort cut then never reaches the
    start of the newest line."""
    return "\n".join(f"{x.character}: {clip(x.text)}" for x in scene)


def judge_messages(*, story: str, character: str, scene: list[IndexedLine], reference: str,
                   prediction: str) -> list[dict[str, str]]:
    context, reference, prediction = scene_lines(scene), clip(reference), clip(prediction)
    user = (f'Story: "{story}". Scene:\n{context}\n\nReal action of {character}: {reference}\n'
            f"Predicted action of {character}: {prediction}\n\n"
            "For each dimension answer yes if the prediction matches the real action on it: "
            "emotion (the feeling expressed), intent (what the character wants), causality (it "
            "responds to the same cause), position (the stance taken), content (what is said "
            "or done).")
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


DIMENSION_TEXT = {
    "emotion": "the feeling the character expresses",
    "intent": "what the character wants to achieve",
    "causality": "responding to the same cause in the scene",
    "position": "the stance the character takes",
    "content": "what the character says or does",
}


class Answer(BaseModel):
    answer: YesNo


def dimension_messages(*, dimension: str, story: str, character: str, scene: list[IndexedLine],
                       reference: str, prediction: str) -> list[dict[str, str]]:
    """One yes/no question for one dimension (the paper's protocol: five independent calls)."""
    context, reference, prediction = scene_lines(scene), clip(reference), clip(prediction)
    user = (f'Story: "{story}". Scene:\n{context}\n\nReal action of {character}: {reference}\n'
            f"Predicted action of {character}: {prediction}\n\n"
            f"Does the prediction match the real action in {dimension} "
            f"({DIMENSION_TEXT[dimension]})? Answer yes or no.")
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


async def judge(judge_llm: LLM, *, mode: str = "independent", **kw) -> dict[str, int]:
    """Scores 100/0 per dimension: five independent yes/no calls (the paper's protocol), or
    with mode "single" one call answering all five (cheaper; labelled so in results)."""
    if mode == "single":
        verdict = await judge_llm.structured(judge_messages(**kw), Judgement,
                                             purpose="judge:nap", max_tokens=80)
        return {d: 100 if getattr(verdict, d) == "yes" else 0 for d in DIMENSIONS}
    answers = await gather_all(*(
        judge_llm.structured(dimension_messages(dimension=d, **kw), Answer,
                             purpose=f"judge:nap:{d}", max_tokens=12) for d in DIMENSIONS))
    return {d: 100 if a.answer == "yes" else 0 for d, a in zip(DIMENSIONS, answers, strict=True)}


def run_setup(llms: dict[str, LLM]) -> dict:
    """The models and settings a run used (stored with it)."""
    setup = {role: {"model": llm.model.name, "base_url": llm.model.base_url,
                    "temperature": llm.config.temperature}
             for role, llm in llms.items()}
    embedder = getattr(llms.get("memory"), "embedder", None)
    setup["retrieval"] = ({"by": "embeddings", "model": embedder.model.name,
                           "base_url": embedder.model.base_url} if embedder else {"by": "bm25"})
    if "memory" in llms:  # how a block is read for several bookmarks
        setup["sync_mode"] = resolve_mode(llms["memory"])
    return setup


def judge_warning(llms: dict[str, LLM]) -> str | None:
    """The paper judges with a model distinct from every evaluated one: say so if not — the
    same model reached at another address or by another spelling is the same model
    (`model_identity`)."""
    judge_, actor = llms.get("judge"), llms.get("actor")
    if judge_ and actor and model_identity(judge_) == model_identity(actor):
        return (f"The judge model is the actor's own ({judge_.model.name}); a model judging its "
                "own predictions is biased. Configure a different judge (BOOKMARKS_JUDGE_MODEL "
                "or Settings) for numbers you report.")
    return None


def mean(scores: dict[str, int]) -> float:
    return sum(scores[d] for d in DIMENSIONS) / len(DIMENSIONS)


def best_index(all_scores: list[dict[str, int]]) -> int:
    """Best@k: the sample with the highest mean score (the first among equals)."""
    return max(range(len(all_scores)), key=lambda n: (mean(all_scores[n]), -n))


def start_run(store: Store, kind: str, story_id: int, method: str, params: dict,
           run_id: int | None) -> dict:
    if run_id is not None:
        run = store.run(run_id)
        if run["kind"] != kind:
            raise BookmarksError(f"Run {run_id} is a {run['kind']} run, not {kind}.")
        return run
    space = f"eval-{kind}-{method}-{uuid.uuid4().hex[:8]}"
    return store.run(store.create_run(kind, story_id, method, params, space))


async def run_nap(store: Store, llms: dict[str, LLM], story_id: int | None = None, *,
                  method: str = "bookmarks", characters: list[str] | None = None,
                  points: int | None = None, span: tuple[int, int] | None = None, k: int = 1,
                  budget: int = 3, capacity: int | None = None, judge_mode: str = "independent",
                  run_id: int | None = None, concurrency: int = 4, knowledge: str = "omniscient",
                  use_cache: bool = True,
                  on_record: Callable[[dict, int, int], None] | None = None) -> dict:
    """NAP as the paper runs it: every eligible action of the chosen characters (default:
    major) over `span` (first, last action; default the whole story), in story order, with
    memory starting empty; `points` instead takes an evenly spread sample of that many.
    Five independent yes/no judge calls per prediction (concurrently) unless
    `judge_mode="single"`; predictions and verdicts of up to `concurrency` points run while
    the next points are grounded."""
    if judge_mode not in ("independent", "single"):
        raise BookmarksError("The judge mode is 'independent' (five calls) or 'single'.")
    params = {"characters": characters, "points": points, "span": list(span) if span else None,
              "k": k, "budget": budget, "capacity": capacity, "judge": judge_mode,
              "knowledge": knowledge,
              "protocol": "sample" if points else "every eligible action",
              "setup": run_setup(llms)}
    run = start_run(store, "nap", story_id or 0, method, params, run_id)
    llms = metered(llms, use_cache)
    p = run["params"]
    story_id, method = run["story_id"], run["method"]
    story = store.story(story_id)
    cast = store.characters(story_id)
    lineage = Lineage.of(store, story.trunk_id)
    eligible = eligible_points(store, story_id, p["characters"])
    if p.get("span"):
        lo, hi = p["span"]
        eligible = [a for a in eligible if lo <= a.index <= hi]
    chosen = spread(eligible, p["points"]) if p.get("points") else eligible
    if not chosen:
        raise BookmarksError("No eligible actions in that range for those characters.")
    done = store.record_keys(run["id"])
    # Memory is grounded point after point, in story order within a shard (reuse depends on
    # it); the actor and judge calls of a point do not touch memory, so they run while the
    # next points are grounded — up to `concurrency` points in flight, as a batching server
    # (vLLM, a hosted API) can serve them. Each point's memory commits before its record:
    # a stopped run re-does the points without a record, from their checkpoints.
    in_flight: set[asyncio.Task] = set()
    slots = asyncio.Semaphore(max(1, concurrency))
    finished = 0

    def save(record: dict) -> None:
        nonlocal finished
        store.add_record(run["id"], str(record["point"]), record)
        finished += 1
        if on_record:
            on_record(record, finished, len(chosen))

    async def predict_and_judge(action, grounding, scene) -> None:
        try:
            save(await _predict(llms, story.title, cast, action, grounding, scene, p))
        finally:
            slots.release()

    async def shard(actions: list, space: str) -> None:
        """One character's points, in story order, on that character's own memory."""
        nonlocal finished
        for action in actions:
            if str(action.index) in done:
                finished += 1
                continue
            try:
                grounding, scene = await ground_at(store, llms["memory"], story_id=story_id,
                                                   lineage=lineage, position=action.index,
                                                   character=action.character, method=method,
                                                   budget=p["budget"], space=space,
                                                   capacity=p.get("capacity"),
                                                   knowledge=p.get("knowledge", "omniscient"))
            except StructuredOutputError as exc:  # the method could not ground: it scores 0
                save({"point": action.index, "character": action.character,
                      "predictions": [None] * p["k"], "best": 0, "actual": action.text,
                      "scores": [dict.fromkeys(DIMENSIONS, 0) for _ in range(p["k"])],
                      "failures": [f"grounding: {exc}"], "grounding_failed": True})
                continue
            store.commit_memory(grounding.writes)
            await slots.acquire()
            for t in [t for t in in_flight if t.done()]:
                in_flight.discard(t)
                t.result()  # a server failure stops the run here (resume it later)
            in_flight.add(asyncio.create_task(predict_and_judge(action, grounding, scene)))

    # Shards: each character's points are grounded in story order on that character's own
    # memory space; shards run side by side and share the `concurrency` slots, and resume
    # independently (records are per point). One character keeps the run's own space.
    by_character: dict[str, list] = {}
    for action in chosen:
        by_character.setdefault(action.character, []).append(action)
    spaces = {c: run["space"] if len(by_character) == 1 else f"{run['space']}:{c}"
              for c in by_character}
    shards = [asyncio.create_task(shard(acts, spaces[c])) for c, acts in by_character.items()]
    try:
        await asyncio.gather(*shards)
        await asyncio.gather(*in_flight)
    finally:  # a failure stops the run: no call of it goes on at the server
        for t in [*shards, *in_flight]:
            t.cancel()
        await asyncio.gather(*shards, *in_flight, return_exceptions=True)
    summary = summarize_nap(store.records(run["id"]))
    store.finish_run(run["id"], {**summary, **_apart(store.records(run["id"]), llms)})
    return store.run(run["id"])


def metered(llms: dict[str, LLM], use_cache: bool) -> dict[str, LLM]:
    """The run's own meters (every call of the run counts in them), without the reply
    cache with `use_cache=False`. A reply the cache serves counts at what it first cost:
    figures are what the model would have to do; cached calls are counted apart."""
    if not use_cache:
        llms = {role: replace(llm, cache_get=None, cache_put=None) for role, llm in llms.items()}
    return {role: replace(llm, count_cached=True).metered() for role, llm in llms.items()}


def _apart(records: list[dict], llms: dict[str, LLM]) -> dict:
    """What a NAP summary reports apart: points whose grounding failed (they score 0 on
    every dimension, which only a memory method can suffer: the mean without them is
    given too), and each role's model use in this session, cached calls apart."""
    failed = [r for r in records if r.get("grounding_failed")]
    grounded = [r for r in records if not r.get("grounding_failed")]
    out: dict = {"grounding_failures": len(failed),
                 "model_use": {role: dict(llm.usage) for role, llm in llms.items()}}
    if failed and grounded:
        out["best@1_mean_without_grounding_failures"] = round(
            sum(mean(r["scores"][0]) for r in grounded) / len(grounded), 2)
    return out


async def _predict(llms: dict[str, LLM], title: str, cast, action, grounding, scene,
                   p: dict) -> dict:
    """k predictions of one held-out action and their judged scores (one record)."""
    aliases = next((c.aliases for c in cast if c.name == action.character), [])
    predictions, scores, failures, tries, stand_ins = [], [], [], [], []
    for _ in range(p["k"]):
        try:
            result = await act(llms["actor"], story_title=title, character=action.character,
                               scene=[Line(x.character, x.text) for x in scene],
                               grounding=grounding.text, aliases=aliases,
                               others=[c.name for c in cast if c.name != action.character])
            score = await judge(llms["judge"], mode=p.get("judge", "single"), story=title,
                                character=action.character, scene=scene,
                                reference=action.text, prediction=result.text)
        except (NoUsableLineError, StructuredOutputError) as exc:
            # an unusable prediction (or verdict) scores 0 on every dimension, like an
            # invalid MCQ answer; server failures still stop the run (resume it later)
            predictions.append(None)
            scores.append(dict.fromkeys(DIMENSIONS, 0))
            failures.append(str(exc))
            continue
        predictions.append(result.text)
        scores.append(score)
        tries.append(result.tries)
        if result.fallback:  # no try gave a line: a stand-in was judged
            stand_ins.append({k: v for k, v in fallback_event(result).items() if k != "kind"})
    return {"point": action.index, "character": action.character,
            "scene": [[x.index, x.character, x.text] for x in scene],
            "grounding": grounding.text, "predictions": predictions, "scores": scores,
            "best": best_index(scores), "actual": action.text, "memory_usage": grounding.usage,
            "failures": failures, "actor_tries": tries,
            # where the grounding degraded instead of failing (invalid model output)
            "fallbacks": [{"step": e["step"], "outcome": e["outcome"], "reason": e["reason"]}
                          for e in grounding.events if e.get("kind") == "fallback"] + stand_ins,
            # how blocks were read for several bookmarks (engine/joint_sync.py)
            "sync_modes": dict(Counter(e.get("mode", "separate") for e in grounding.events
                                       if e.get("kind") == "synchronized"))}


def summarize_nap(records: list[dict]) -> dict:
    if not records:
        return {"items": 0}
    out: dict = {"items": len(records)}
    for label, pick in (("best@1", lambda r: r["scores"][0]),
                        ("best@k", lambda r: r["scores"][r["best"]])):
        per = {d: sum(pick(r)[d] for r in records) / len(records) for d in DIMENSIONS}
        per["mean"] = sum(per.values()) / len(DIMENSIONS)
        out[label] = {d: round(v, 2) for d, v in per.items()}
    out["k"] = len(records[0]["scores"])
    out["unusable_predictions"] = sum(len(r.get("failures", [])) for r in records)
    # predictions no actor try gave a line for: a stand-in was judged (a fallback of `act`)
    out["stand_in_predictions"] = sum(f["step"] == "act" for r in records
                                      for f in r.get("fallbacks", []))
    # degraded, not failed: points grounded with a fallback; lines the actor was re-asked for
    out["points_with_fallback"] = sum(bool(r.get("fallbacks")) for r in records)
    out["fallback_share"] = round(out["points_with_fallback"] / len(records), 3)
    lines = [t for r in records for t in r.get("actor_tries", [])]
    out["reasked_lines"] = sum(t > 1 for t in lines)
    out["reasked_share"] = round(out["reasked_lines"] / len(lines), 3) if lines else 0.0
    out["sync_modes"] = dict(sum((Counter(r.get("sync_modes") or {}) for r in records),
                                 Counter()))
    return out


def efficiency_buckets(rows: list[dict], n: int = 4) -> list[dict]:
    """Sync cost actual vs without reuse, per progress bucket (position / story length)."""
    out = []
    for b in range(n):
        lo, hi = b / n, (b + 1) / n
        sel = [r for r in rows if lo < r["position"] / max(1, r["story_length"]) <= hi]
        agg = {"bucket": f"{int(lo * 100)}-{int(hi * 100)}%", "syncs": len(sel)}
        for key in ("actions_read", "actions_read_wo", "calls", "calls_wo"):
            agg[key] = round(sum(r[key] for r in sel), 1)
        agg["tokens"] = sum(r["prompt_tokens"] + r["completion_tokens"] for r in sel)
        agg["tokens_wo"] = round(sum(r["prompt_tokens_wo"] + r["completion_tokens_wo"] for r in sel))
        agg["output_tokens"] = sum(r["completion_tokens"] for r in sel)
        agg["output_tokens_wo"] = round(sum(r["completion_tokens_wo"] for r in sel))
        out.append(agg)
    return out


SWEEP = {"bookmarks": ("budget", (2, 3, 5)), "eta": ("capacity", (128, 256, 512, 1024)),
         "eta3": ("capacity", (128, 256, 512))}


async def run_sweep(store: Store, llms: dict[str, LLM], story_id: int, *,
                    methods: tuple[str, ...] = ("bookmarks", "eta3"), points: int = 5,
                    characters: list[str] | None = None,
                    on_run: Callable[[dict], None] | None = None) -> list[dict]:
    """Capacity sweeps (the paper's Figure 3, right): Bookmarks over budgets {2, 3, 5},
    (3-way) ETA over profile capacities; one NAP run per setting on the same points.
    Returns rows: method, setting, mean score (Best@1), sync tokens actual. The reply
    cache is off during a sweep, so a later setting does not look cheaper by reusing an
    earlier setting's replies."""
    llms = {role: replace(llm, cache_get=None, cache_put=None) for role, llm in llms.items()}
    rows = []
    for method in methods:
        knob, values = SWEEP[method]
        for value in values:
            kw = {"budget": value} if knob == "budget" else {"capacity": value}
            run = await run_nap(store, llms, story_id, method=method, points=points,
                                characters=characters, **kw)
            costs = store.sync_costs(story_id, run["space"])
            row = {"method": method, "knob": knob, "value": value, "run": run["id"],
                   "mean": run["summary"].get("best@1", {}).get("mean", 0.0),
                   "sync_tokens": sum(c["prompt_tokens"] + c["completion_tokens"] for c in costs)}
            rows.append(row)
            if on_run:
                on_run(row)
    return rows
