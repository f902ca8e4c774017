"""Degrade, never fail: walk every method (Bookmarks, the ablations, the baselines) over the
same consecutive points of a long story with the configured model (the embedded one
unless a server is set), memory starting empty, and count per method the failed
predictions, the points whose grounding fell back (invalid model output: proposal,
match decision, synchronization, 3-way ETA selection) and the lines the actor had to be
asked again for (its reply was the app's own words, another speaker, empty, …).

    python benchmarks/degrade_walk.py [--points 5] [--start 60] [--methods a,b]
                                      [--minutes 40] [--character NAME] [--budget 3]
                                      [--scripted [echo-then-line|echo-then-long]]
                                      [--out FILE.json [--resume]]

`--out` is rewritten after every round of points, so a walk stopped early (or split by
`--methods` over several runs: each method walks on its own memory) leaves its figures.
`--resume` goes on from such a file: the points it holds are not walked again, the rest
are, and the figures add up. Memory does not survive a stop (it lived in a temporary
database), so each method starts empty again at the first resumed point — exact for
`bookmarks-noreuse` (nothing is recalled anyway); for the others that one point re-reads
the storyline from p = 0. The file records where it was resumed (`resumed`).

`--scripted`: instead of a model, the scripted worst case (`WorstCaseMemory`, a test
double): every proposal has pronoun titles (worded a little differently each time, so
that match decisions are asked for), every match decision, synchronization,
summary and selection is invalid JSON, and every actor call is first answered with an
echo of its prompt; the re-ask gets a line (`echo-then-line`) or a line that runs on past
the length limit and is cut there (`echo-then-long`). Replies longer than a request's
max_tokens are cut, as a server cuts them. It measures the engine's degrading, not a
model: `python benchmarks/degrade_walk.py --scripted --points 50`.

Points: the first `--points` consecutive speeches of the chosen (default: major)
characters from action `--start` on. The walk goes point by point, and at each point
every method predicts in turn on its own memory (which carries over to its next point,
as in `bookmarks walk`), so when `--minutes` have passed and the round in progress is
done, every method has walked the same points. Calls are never served from the cache
(each method pays its own way).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path

from bookmarks.config import load_settings
from bookmarks.engine.actor import TRIMMED
from bookmarks.engine.methods import METHODS
from bookmarks.evaluation.walk import eligible_points, walk
from bookmarks.models.llm import LENGTH_NOTE, LLM
from bookmarks.models.testing import ScriptedFakeModel, WorstCaseMemory
from bookmarks.services import BUNDLED_STORIES, Services


def scripted(services: Services, actor: str) -> dict[str, LLM]:
    """Every role on the scripted worst case (one fake, replies cut at max_tokens), with
    the roles' configured limits and the embedded model's context."""
    fake = ScriptedFakeModel(name=f"worst-case ({actor})", enforce_max_tokens=True,
                             default=WorstCaseMemory(actor=actor, vary=True))
    return {role: dataclasses.replace(
                llm, model=fake, embedder=None,
                config=dataclasses.replace(llm.config, base_url=fake.base_url,
                                           context_tokens=llm.config.context_tokens
                                           or services.settings.embedded_ctx))
            for role, llm in services.llms.items()}


def length_reasks(llms: dict[str, LLM]) -> int:
    """The actor's calls since the last count that were the model layer's own re-ask of a
    reply cut at the length limit (`LLM.text`; not the actor's re-asks): scripted only."""
    history = getattr(llms["actor"].model, "history", None)
    if history is None:
        return 0
    n = sum(1 for req in history if "next line." in req.messages[1]["content"]
            and req.messages[-1]["content"].endswith(LENGTH_NOTE))
    history.clear()  # and no pile of requests over a long walk
    return n


def trimmed(r: dict) -> bool:
    return any(x["reason"].startswith(TRIMMED) for x in r.get("rejected", []))


def show(method: str, r: dict) -> None:
    if "error" in r:
        print(f"  #{r['point']:>5} {method:<22} FAILED: {r['error'][:200]}", flush=True)
        return
    steps = ",".join(f["step"] for f in r["fallbacks"]) or "-"
    print(f"  #{r['point']:>5} {method:<22} {r['seconds']:>6.1f} s {r['memory_calls']:>3} memory "
          f"calls  fallbacks: {steps:<14} actor tries {r.get('actor_tries', '-')}"
          f"  → {(r['prediction'] or '')[:60]!r}", flush=True)
    for f in r["fallbacks"]:
        print(f"          fallback {f['step']}: {f['outcome'][:80]} ({f['reason'][:90]})", flush=True)
    for x in r.get("rejected", []):
        what = "" if x["reason"].startswith(TRIMMED) else "re-asked: "  # the reason says trimmed
        print(f"          {what}{x['reason'][:70]} ← {x['reply'][:60]!r}", flush=True)


def tally(method: str, records: list[dict], seconds: float, cut_reasks: int | None) -> dict:
    done = [r for r in records if "error" not in r]
    steps: dict[str, int] = {}
    for r in done:
        for f in r["fallbacks"]:
            steps[f["step"]] = steps.get(f["step"], 0) + 1
    with_fallback = sum(bool(r["fallbacks"]) for r in done)
    reasked = sum(r.get("actor_tries", 1) > 1 for r in done)
    cut = sum(trimmed(r) for r in done)
    return {"method": method, "points": len(records), "completed": len(done),
            "failed": len(records) - len(done), "points_with_fallback": with_fallback,
            "fallback_share": round(with_fallback / len(done), 3) if done else None,
            "fallbacks_by_step": steps, "reasked_lines": reasked,
            "reasked_share": round(reasked / len(done), 3) if done else None,
            "trimmed_lines": cut, "trimmed_share": round(cut / len(done), 3) if done else None,
            "length_reasks": cut_reasks,  # the model layer's, before the actor sees a reply
            "actor_tries": sum(r.get("actor_tries", 0) for r in done),
            "memory_calls": sum(r["memory_calls"] for r in done), "seconds": round(seconds, 1),
            "errors": [f"#{r['point']}: {r['error']}" for r in records if "error" in r]}


def save(out: str, title: str, walked: list[int], args: argparse.Namespace, some: dict,
         started: float, methods: list[str], records: dict, seconds: dict,
         cut_reasks: dict, prior: dict | None) -> None:
    """The figures of the rounds done so far (rewritten after every round)."""
    if not out:
        return
    rows = [tally(m, records[m], seconds[m], cut_reasks[m]) for m in methods]
    minutes = (time.perf_counter() - started) / 60 + (prior["minutes"] if prior else 0)
    extra = {"resumed": prior["resumed"]} if prior else {}
    Path(out).write_text(json.dumps(
        {"story": title, "points": walked, "budget": args.budget,
         "model": some["actor"].model.name, "minutes": round(minutes, 1), **extra,
         "rows": rows, "records": records}, indent=1, ensure_ascii=False))


def resume(args: argparse.Namespace, title: str, model: str, methods: list[str],
           points: list[int]) -> dict | None:
    """The earlier run in `--out` to go on from (None for a new walk); it must be the same
    walk: story, budget, model and methods, its points the first of this walk's."""
    if not args.resume:
        return None
    if not args.out or not Path(args.out).exists():
        raise SystemExit(f"--resume: there is no earlier walk in {args.out or '(no --out)'}")
    prior = json.loads(Path(args.out).read_text())
    mine = {"story": title, "budget": args.budget, "model": model}
    for key, value in mine.items():
        if prior.get(key) != value:
            raise SystemExit(f"--resume: {args.out} walked {key} {prior.get(key)!r}, "
                             f"this walk {value!r}")
    if sorted(prior["records"]) != sorted(methods):
        raise SystemExit(f"--resume: {args.out} walked the methods "
                         f"{', '.join(prior['records'])}, not {', '.join(methods)}")
    if prior["points"] != points[: len(prior["points"])]:
        raise SystemExit(f"--resume: {args.out} walked other points ({prior['points'][:5]}…)")
    left = points[len(prior["points"]):]
    if left:
        prior["resumed"] = prior.get("resumed", []) + [
            {"at": left[0], "memory": "started empty"}]
    return prior


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({**os.environ, "BOOKMARKS_DATA_DIR": tmp})
        services = Services.open(settings)
        store = services.store
        story_id = services.import_file(Path(args.story))
        story = store.story(story_id)
        points = [a.index for a in eligible_points(store, story_id, args.character)
                  if a.index >= args.start][: args.points]
        methods = args.methods.split(",") if args.methods else list(METHODS)
        some = scripted(services, args.scripted) if args.scripted else services.llms
        print(f"{story.title}: {story.n_actions} actions; actor {some['actor'].model.name}, "
              f"memory {some['memory'].model.name}; points {points}; K={args.budget}; "
              f"methods {', '.join(methods)}", flush=True)
        prior = resume(args, story.title, some["actor"].model.name, methods, points)
        records: dict[str, list[dict]] = prior["records"] if prior else {m: [] for m in methods}
        seconds = ({r["method"]: r["seconds"] for r in prior["rows"]} if prior
                   else dict.fromkeys(methods, 0.0))
        spaces: dict[str, str | None] = dict.fromkeys(methods)
        # scripted: each method its own worst case (the first ask of every prompt echoed)
        llms = {m: scripted(services, args.scripted) if args.scripted else services.llms
                for m in methods}
        cut_reasks = dict.fromkeys(methods, 0 if args.scripted else None)
        if prior and args.scripted:
            cut_reasks = {r["method"]: r["length_reasks"] or 0 for r in prior["rows"]}
        started = time.perf_counter()
        walked = list(prior["points"]) if prior else []
        first = len(walked)  # points walked before this run
        for point in points[len(walked):]:
            if len(walked) > first and time.perf_counter() - started > args.minutes * 60:
                print(f"\n{args.minutes} minutes have passed: stopping before point {point}.")
                break
            for method in methods:
                t0 = time.perf_counter()
                summary = await walk(store, llms[method], story_id, method=method, at=[point],
                                     budget=args.budget, use_cache=False, space=spaces[method],
                                     on_point=lambda r, m=method: (records[m].append(r), show(m, r)))
                spaces[method] = summary.space
                if args.scripted:
                    cut_reasks[method] += length_reasks(llms[method])
                seconds[method] += time.perf_counter() - t0
            walked.append(point)
            save(args.out, story.title, walked, args, some, started, methods, records,
                 seconds, cut_reasks, prior)  # a walk stopped early still leaves its figures
        wall = time.perf_counter() - started
        rows = [tally(m, records[m], seconds[m], cut_reasks[m]) for m in methods]
        print(f"\npoints {walked}; {wall / 60:.1f} minutes in all")
        print("method                  points failed with-fallback re-asked trimmed cut-re-asks"
              "  seconds")
        for r in rows:
            print(f"{r['method']:<24}{r['points']:>6}{r['failed']:>7}{r['points_with_fallback']:>14}"
                  f"{r['reasked_lines']:>9}{r['trimmed_lines']:>8}{r['length_reasks'] or 0:>12}"
                  f"{r['seconds']:>9.1f}   {r['fallbacks_by_step']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--story", default=str(BUNDLED_STORIES / "the_long_winter_at_harrowgate.txt"))
    parser.add_argument("--points", type=int, default=5)
    parser.add_argument("--start", type=int, default=60)
    parser.add_argument("--methods", default="", help="comma-separated (default: every method)")
    parser.add_argument("--minutes", type=float, default=40.0,
                        help="start no new point after this many minutes")
    parser.add_argument("--character", action="append", default=None)
    parser.add_argument("--budget", type=int, default=3)
    parser.add_argument("--scripted", nargs="?", const="echo-then-line", default="",
                        choices=["echo-then-line", "echo-then-long"],
                        help="the scripted worst-case model instead of the configured one")
    parser.add_argument("--out", default="")
    parser.add_argument("--resume", action="store_true",
                        help="go on from the walk in --out (its points are not walked again)")
    asyncio.run(main(parser.parse_args()))
