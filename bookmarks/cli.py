"""The `bookmarks` command: import and list stories, serve the web app.

Errors the user can act on print one line to stderr and exit 1; never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bookmarks.commands.cards import add_parsers as add_card_parsers
from bookmarks.commands.storyline import add_parsers as add_line_parsers
from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError
from bookmarks.stories.importers import FORMATS


def _services():
    from bookmarks.services import Services

    return Services.open()


def cmd_import(args: argparse.Namespace) -> int:
    services = _services()
    if args.again:  # `bookmarks import --again ID`: the kept file read with today's rules
        if not args.path.isdigit():
            raise BookmarksError(f"--again takes a story's id (bookmarks list), not {args.path!r}.")
        print(services.import_again(int(args.path))[1])
        return 0
    if args.attribute:
        from bookmarks.engine.attribution import apply, suggest
        from bookmarks.models.llm import run_sync
        from bookmarks.stories.importers import load_story

        story = load_story(args.path, fmt=args.format, title=args.title,
                           max_bytes=services.settings.max_upload_bytes)
        found = run_sync(suggest(services.llms["memory"], story))
        for s in found:
            mark = "✓" if s.speaker != "unknown" and s.confidence >= args.min_confidence else " "
            print(f" {mark} [{s.index}] {s.speaker} ({s.confidence:.2f}): {s.text[:90]}")
        story = apply(story, found, args.min_confidence)
        story_id = services.store.add_story(story)
    else:
        story_id = services.import_file(args.path, fmt=args.format, title=args.title)
    info = services.store.story(story_id)
    n_chars = len(services.store.characters(story_id))
    print(f"Imported story {story_id}: {info.title!r} — {info.n_actions} actions, "
          f"{n_chars} characters ({info.source_format}).")
    if reasons := services.store.check_reasons(story_id):
        why = ", ".join(f"{r} {n}" for r, n in reasons.items())
        print(f"{sum(reasons.values())} lines to check ({why}): their speaker was found without "
              "a tag naming them (bookmarks line --story ID --to-check, or Library → Show → lines "
              "to check; the JSONL export marks them \"check\").")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    services = _services()
    if args.bundled:
        services.ensure_bundled()
    stories = services.store.list_stories()
    if not stories:
        print("No stories yet. Import one with: bookmarks import PATH")
        return 0
    print(f"{'id':>4}  {'actions':>7}  {'chars':>5}  title")
    for s in stories:
        n_chars = len(services.store.characters(s.id))
        print(f"{s.id:>4}  {s.n_actions:>7}  {n_chars:>5}  {s.title}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from bookmarks.commands.story_out import print_story, write_story
    from bookmarks.engine.cards import world_info_for
    from bookmarks.scenes.scene_export import export_scene

    store = _services().store
    if args.format is None:
        args.format = "jsonl" if args.scene is None and args.story is not None else "markdown"
    if args.format == "worldinfo":
        if args.scene is None and args.story is None:
            raise BookmarksError("Give --scene ID or --story ID.")
        story_id = store.scene(args.scene).story_id if args.scene is not None else args.story
        return _emit(world_info_for(store, story_id, scene_id=args.scene) + "\n", args.out)
    if args.scene is None and args.story is not None:
        if args.format not in ("jsonl", "fountain"):
            raise BookmarksError(f"A story exports as jsonl or fountain, not {args.format}.")
        store.story(args.story)
        if args.out is None:
            print_story(store, args.story, args.format)
            return 0
        written = write_story(store, args.story, args.format, args.out)
        print("Wrote " + ", ".join(str(p) for p in written) + ". Import it again with: "
              f"bookmarks import {written[0]}")
        return 0
    if args.scene is None:
        raise BookmarksError(f"--format {args.format} exports a scene: give --scene ID "
                             "(or --story ID with jsonl or fountain).")
    return _emit(export_scene(store, args.scene, args.format), args.out)


def _emit(text: str, out: str | None) -> int:
    if out is None:
        print(text, end="")
        return 0
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BookmarksError(f"{out}: cannot be written ({exc.strerror or exc}).") from None
    print(f"Wrote {out}.")
    return 0


def cmd_prepare(args: argparse.Namespace) -> int:
    from bookmarks.models.llm import run_sync
    from bookmarks.scenes.prepare import plan, prepare

    services = _services()
    the_plan = plan(services.store, args.story, characters=args.character, every=args.every,
                    budget=args.budget)
    print(the_plan.describe(), flush=True)
    if args.estimate:
        return 0

    def show(step: dict) -> None:
        print(f"  [{step['step']}/{step['steps']}] checkpoint {step['point']} for "
              f"{step['character']}: {step['calls']} calls, {step['actions_read']} actions read",
              flush=True)

    record = run_sync(prepare(services.store, services.llms["memory"], the_plan,
                              budget=args.budget, on_step=show))
    print(f"Prepared {record['done']} of {record['steps']} steps (up to action "
          f"{record['last_point']}). Scenes started anywhere now reuse these checkpoints.")
    return 0


def _span(text: str) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a range is FIRST:LAST, e.g. 200:800, not {text!r}") \
            from None
    if not 1 <= a <= b:
        raise argparse.ArgumentTypeError("a range needs 1 ≤ FIRST ≤ LAST")
    return a, b


def _points(text: str) -> list[int]:
    try:
        points = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"story points are whole numbers separated by commas, "
                                         f"not {text!r}") from None
    if not points or min(points) < 1:
        raise argparse.ArgumentTypeError("story points start at 1")
    return points


def cmd_walk(args: argparse.Namespace) -> int:
    import json

    from bookmarks.evaluation.walk import format_record, walk
    from bookmarks.models.llm import run_sync

    services = _services()
    services.store.story(args.story)

    def show(record: dict) -> None:
        print(json.dumps(record, ensure_ascii=False) if args.json else format_record(record),
              flush=True)

    summary = run_sync(walk(services.store, services.llms, args.story, method=args.method,
                            characters=args.character, points=args.points, budget=args.budget,
                            predict=not args.no_predict, on_point=show, at=args.at,
                            use_cache=not args.no_cache))
    if args.json:
        print(json.dumps(summary.as_dict()))
    else:
        d = summary.as_dict()
        print(f"\n{d['points']} points with {d['method']}: {d['reused']} reused, "
              f"{d['initialized']} initialized; actions read {d['actions_read']} "
              f"(without reuse {d['actions_read_without_reuse']}); sync tokens {d['tokens']:.0f} "
              f"(without reuse ≈{d['tokens_without_reuse']:.0f}); {d['memory_calls']} memory calls; "
              f"{d['seconds']} s; {len(d['errors'])} points failed.")
    return 0


def _progress(label: str):
    import time

    started = time.monotonic()
    first: list[int] = []

    def show(record: dict, n: int, total: int) -> None:
        if not first:
            first.append(n)
        bar = "#" * int(30 * n / total)
        done_here = n - first[0] + 1  # items finished in this process (a resume skips some)
        left = (time.monotonic() - started) / done_here * (total - n) if done_here else 0
        eta = f", ~{left / 60:.0f} min left" if left >= 60 else f", ~{left:.0f} s left"
        print(f"\r{label} [{bar:<30}] {n}/{total}{eta if n < total else ''}   ", end="",
              file=sys.stderr, flush=True)
    return show


def cmd_eval(args: argparse.Namespace) -> int:
    import json

    from bookmarks.evaluation import evaluate, mcq
    from bookmarks.evaluation.export import run_rows, to_csv, to_jsonl
    from bookmarks.models.llm import run_sync

    services = _services()
    store = services.store
    if args.eval_command == "nap":
        if warning := evaluate.judge_warning(services.llms):
            print(f"warning: {warning}", file=sys.stderr)
        run = run_sync(evaluate.run_nap(store, services.llms, args.story, method=args.method,
                                        characters=args.character, points=args.points,
                                        span=args.range, k=args.k, budget=args.budget,
                                        capacity=args.capacity, judge_mode=args.judge,
                                        knowledge=args.knowledge, run_id=args.resume,
                                        concurrency=args.concurrency,
                                        use_cache=not args.no_cache,
                                        on_record=_progress("NAP")))
    elif args.eval_command == "mcq":
        run = run_sync(mcq.run_mcq(store, services.llms, args.story, method=args.method,
                                        budget=args.budget, limit=args.limit, run_id=args.resume,
                                        knowledge=args.knowledge, use_cache=not args.no_cache,
                                        on_record=_progress("MCQ")))
    elif args.eval_command == "sweep":
        rows = run_sync(evaluate.run_sweep(store, services.llms, args.story,
                                           methods=tuple(args.method or ("bookmarks", "eta3")),
                                           points=args.points, characters=args.character,
                                           on_run=lambda r: print(json.dumps(r), flush=True)))
        print(json.dumps({"sweep": len(rows)}))
        return 0
    elif args.eval_command == "results":
        for run in store.runs(args.story):
            print(json.dumps({k: run[k] for k in ("id", "kind", "story_id", "method", "status",
                                                  "params", "summary")}))
        return 0
    elif args.eval_command == "compare":
        from bookmarks.evaluation.report import compare, format_compare

        print(format_compare(compare(store, args.run_a, args.run_b)))
        return 0
    elif args.eval_command == "table":
        from bookmarks.evaluation.report import format_table, table

        print(format_table(table(store, args.runs), args.format))
        return 0
    elif args.eval_command == "efficiency":
        run = store.run(args.run)
        for row in evaluate.efficiency_buckets(store.sync_costs(run["story_id"], run["space"])):
            print(json.dumps(row))
        use = run["summary"].get("model_use", {}).get("memory")
        if use:  # replies the cache served count above at what they first cost; apart here
            print(f"memory calls: {use['calls']}, of which {use['cached_calls']} served by the "
                  f"reply cache ({use['cached_tokens']} tokens)", file=sys.stderr)
        return 0
    else:  # export
        rows = run_rows(store, args.run)
        print(to_csv(rows) if args.format == "csv" else to_jsonl(rows), end="")
        return 0
    print(file=sys.stderr)
    print(json.dumps({"run": run["id"], "kind": run["kind"], "method": run["method"],
                      **run["summary"]}))
    return 0


def cmd_arena(args: argparse.Namespace) -> int:
    import json

    from bookmarks.evaluation import arena
    from bookmarks.evaluation.export import label_studio_tasks, to_csv, to_jsonl
    from bookmarks.models.llm import run_sync

    services = _services()
    store = services.store
    if args.arena_command == "generate":
        refused: list[str] = []
        ids = run_sync(arena.generate_starts(store, services.llms["memory"], args.story, args.n,
                                             source=args.source, refused=refused))
        print(json.dumps({"starts": ids, "refused": refused}, ensure_ascii=False))
        return 0 if ids else 1
    elif args.arena_command == "run":
        starts = args.start or [s["id"] for s in store.arena_starts(args.story)]
        failed = 0
        for n, start in enumerate(starts, start=1):
            try:
                item = run_sync(arena.run_item(store, services.llms, start, method_a=args.a,
                                               method_b=args.b, turns=args.turns,
                                               budget=args.budget))
            except BookmarksError as exc:  # report it, go on with the other starts
                failed += 1
                print(json.dumps({"start": start, "error": str(exc)}))
                continue
            _progress("arena")({}, n, len(starts))
            print(json.dumps({"start": start, "item": item}))
        return 1 if failed == len(starts) else 0
    elif args.arena_command == "judge":
        print(json.dumps({"llm_votes": run_sync(arena.llm_judge(store, services.llms["judge"]))}))
    elif args.arena_command == "results":
        print(json.dumps(arena.results(store, args.a, args.b, source=args.source), indent=1))
    else:
        if args.format == "label-studio":
            print(json.dumps(label_studio_tasks(store), ensure_ascii=False, indent=1))
        else:
            votes = store.judgments()
            print(to_csv(votes) if args.format == "csv" else to_jsonl(votes), end="")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from ui.server import serve

    serve(host=args.host, port=args.port, share=args.share)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bookmarks", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("import", help="import a story file (JSONL, play script, prose, Project "
                                      "Gutenberg play or novel, Fountain, reference JSON)")
    p.add_argument("path")
    p.add_argument("--format", choices=FORMATS, help="override format detection")
    p.add_argument("--title", help="the story's title (default: from the meta file or name)")
    p.add_argument("--attribute", action="store_true",
                   help="ask the memory model who speaks the quotes the rules left as narration "
                        "(suggestions are printed; those at --min-confidence or above applied)")
    p.add_argument("--min-confidence", type=float, default=0.7)
    p.add_argument("--again", action="store_true",
                   help="PATH is a story's id: read the file it was imported from again with the "
                        "current rules, as a new story (the old one and its corrections stay)")
    p.set_defaults(func=cmd_import)
    p = sub.add_parser("list", help="list the stored stories")
    p.add_argument("--bundled", action="store_true", help="import the bundled stories first")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("walk", help="ground and predict at N points of a story, in order")
    p.add_argument("--story", type=int, required=True, help="story id (see: bookmarks list)")
    p.add_argument("--method", default="bookmarks", choices=list(METHODS))
    p.add_argument("--character", action="append", help="whose actions (repeatable; default: major)")
    p.add_argument("--points", type=int, default=10)
    p.add_argument("--budget", type=int, default=3, choices=range(1, 9), metavar="K",
                   help="bookmark budget K, 1-8 (default 3)")
    p.add_argument("--no-predict", action="store_true", help="ground only; skip the actor")
    p.add_argument("--at", type=_points, metavar="I,J,…",
                   help="walk exactly these story points (comma-separated action indices)")
    p.add_argument("--no-cache", action="store_true",
                   help="ask the models every time (for cost comparisons)")
    p.add_argument("--json", action="store_true", help="one JSON object per point, then a summary")
    p.set_defaults(func=cmd_walk)
    p = sub.add_parser("eval", help="benchmarks: NAP, MCQ, results, efficiency, export")
    ev = p.add_subparsers(dest="eval_command", required=True)
    for name in ("nap", "mcq"):
        q = ev.add_parser(name, help=f"run (or --resume) a {name.upper()} benchmark")
        q.add_argument("--story", type=int, help="story id (not needed with --resume)")
        q.add_argument("--method", default="bookmarks", choices=list(METHODS))
        q.add_argument("--budget", type=int, default=3)
        q.add_argument("--resume", type=int, metavar="RUN", help="continue a stopped run")
        q.add_argument("--knowledge", choices=("omniscient", "witnessed"), default="omniscient",
                       help="witnessed: each character's memory holds only what they were "
                            "present for")
        q.add_argument("--no-cache", action="store_true",
                       help="ask the models every time (cached replies otherwise count at "
                            "what they first cost, and apart)")
        if name == "nap":
            q.add_argument("--character", action="append")
            q.add_argument("--points", type=int, default=None,
                           help="an evenly spread sample of N actions (default: every eligible "
                                "action, as the paper does)")
            q.add_argument("--range", type=_span, metavar="A:B",
                           help="only actions A..B of the story (default: all)")
            q.add_argument("--judge", choices=("independent", "single"), default="independent",
                           help="five independent yes/no judge calls (the paper's) or one call")
            q.add_argument("--k", type=int, default=1, help="samples per action (Best@k)")
            q.add_argument("--concurrency", type=int, default=4,
                           help="points whose actor and judge calls run at once (memory is "
                                "still grounded in story order)")
            q.add_argument("--capacity", type=int, help="ETA profile tokens (sweeps)")
        else:
            q.add_argument("--limit", type=int, help="only the first N questions")
    q = ev.add_parser("sweep", help="NAP over bookmark budgets {2,3,5} vs ETA capacities")
    q.add_argument("--story", type=int, required=True)
    q.add_argument("--method", action="append", choices=("bookmarks", "eta", "eta3"))
    q.add_argument("--points", type=int, default=5)
    q.add_argument("--character", action="append")
    q = ev.add_parser("results", help="stored runs and their summaries (JSON lines)")
    q.add_argument("--story", type=int)
    q = ev.add_parser("compare", help="run A − run B on shared items: difference, 95%% CI, "
                                      "permutation p-value")
    q.add_argument("run_a", type=int)
    q.add_argument("run_b", type=int)
    q = ev.add_parser("table", help="the paper's Table 2 layout for the given runs")
    q.add_argument("runs", type=int, nargs="+", help="NAP (and MCQ) run ids")
    q.add_argument("--format", choices=("markdown", "csv", "latex"), default="markdown")
    q = ev.add_parser("efficiency", help="sync cost with vs without reuse by progress bucket")
    q.add_argument("run", type=int)
    q = ev.add_parser("export", help="a run's records as CSV or JSONL")
    q.add_argument("run", type=int)
    q.add_argument("--format", choices=("csv", "jsonl"), default="jsonl")
    p.set_defaults(func=cmd_eval)
    p = sub.add_parser("arena", help="open-domain arena: starts, continuations, votes")
    ar = p.add_subparsers(dest="arena_command", required=True)
    q = ar.add_parser("generate", help="starting scenes drawn from the storyline or model-written")
    q.add_argument("--story", type=int, required=True)
    q.add_argument("--n", type=int, default=3)
    q.add_argument("--from", dest="source", choices=("storyline", "model"), default="model",
                   help="storyline: a point, its characters and setting, no model (any model)")
    q = ar.add_parser("run", help="continue starts with two methods")
    q.add_argument("--story", type=int)
    q.add_argument("--start", type=int, action="append")
    q.add_argument("--turns", type=int, default=10)
    q.add_argument("--budget", type=int, default=3)
    for q in (ar.choices["run"], ar.add_parser("results", help="win/tie/loss with CIs")):
        q.add_argument("--a", default="bookmarks", choices=list(METHODS))
        q.add_argument("--b", default="eta3", choices=list(METHODS))
    ar.choices["results"].add_argument("--source", choices=("human", "llm"), default="human")
    ar.add_parser("judge", help="the judge model votes on every item, both orders")
    q = ar.add_parser("export", help="votes (CSV/JSONL) or items for Label Studio")
    q.add_argument("--format", choices=("csv", "jsonl", "label-studio"), default="jsonl")
    p.set_defaults(func=cmd_arena)
    p = sub.add_parser("prepare", help="prepare a story's memory: checkpoints every N actions "
                                       "for its major characters (resumable)")
    p.add_argument("--story", type=int, required=True)
    p.add_argument("--character", action="append", help="whose memory (repeatable; default: major)")
    p.add_argument("--every", type=int, default=100, help="actions between checkpoints")
    p.add_argument("--budget", type=int, default=3, choices=range(1, 9), metavar="K")
    p.add_argument("--estimate", action="store_true", help="print the estimate only")
    p.set_defaults(func=cmd_prepare)

    p = sub.add_parser("export", help="a scene as Markdown, Fountain or JSONL; a whole story as "
                                      "JSONL (lossless) or Fountain; memory as a SillyTavern "
                                      "World Info file")
    p.add_argument("--scene", type=int, help="scene id")
    p.add_argument("--story", type=int, help="story id: the whole story (jsonl, fountain), or its "
                                             "shared memory (worldinfo)")
    p.add_argument("--format", choices=("markdown", "fountain", "jsonl", "worldinfo"),
                   help="default: markdown for a scene, jsonl for a story")
    p.add_argument("--out", metavar="FILE", help="write to FILE (a story: with its .meta.json "
                                                 "and .questions.jsonl next to it)")
    p.set_defaults(func=cmd_export)
    add_card_parsers(sub)
    add_line_parsers(sub)

    p = sub.add_parser("serve", help="run the web app (same as python app.py)")
    add_serve_args(p)
    p.set_defaults(func=cmd_serve)
    from ui.admin import register  # users (accounts, roles) and campaign list/export

    register(sub)
    return parser


def add_serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    p.add_argument("--share", action="store_true", help="create a public Gradio share link")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from bookmarks.models.embedded import stop_on_signals

    stop_on_signals()  # a SIGTERM'd run stops its embedded model server too
    try:
        return args.func(args)
    except BookmarksError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `bookmarks line --to-check | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (no error at exit)
        return 0


if __name__ == "__main__":
    sys.exit(main())
