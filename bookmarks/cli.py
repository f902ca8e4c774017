"""The `bookmarks` command: import and list stories, serve the web app.

Errors the user can act on print one line to stderr and exit 1; never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from .errors import BookmarksError
from .importers import FORMATS
from .methods import METHODS


def _services():
    from .services import Services

    return Services.open()


def cmd_import(args: argparse.Namespace) -> int:
    services = _services()
    story_id = services.import_file(args.path, fmt=args.format, title=args.title)
    info = services.store.story(story_id)
    n_chars = len(services.store.characters(story_id))
    print(f"Imported story {story_id}: {info.title!r} — {info.n_actions} actions, "
          f"{n_chars} characters ({info.source_format}).")
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


def cmd_walk(args: argparse.Namespace) -> int:
    import json

    from .llm import run_sync
    from .walk import format_record, walk

    services = _services()
    services.store.story(args.story)

    def show(record: dict) -> None:
        print(json.dumps(record, ensure_ascii=False) if args.json else format_record(record),
              flush=True)

    summary = run_sync(walk(services.store, services.llms, args.story, method=args.method,
                            characters=args.character, points=args.points, budget=args.budget,
                            predict=not args.no_predict, on_point=show))
    if args.json:
        print(json.dumps(summary.as_dict()))
    else:
        d = summary.as_dict()
        print(f"\n{d['points']} points with {d['method']}: {d['reused']} reused, "
              f"{d['initialized']} initialized; actions read {d['actions_read']} "
              f"(without reuse {d['actions_read_without_reuse']}); sync tokens {d['tokens']:.0f} "
              f"(without reuse ≈{d['tokens_without_reuse']:.0f}); {d['memory_calls']} memory calls; "
              f"{d['seconds']} s.")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from ui.server import serve

    serve(host=args.host, port=args.port, share=args.share)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bookmarks", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("import", help="import a story file (JSONL, script, prose, reference)")
    p.add_argument("path")
    p.add_argument("--format", choices=FORMATS, help="override format detection")
    p.add_argument("--title", help="the story's title (default: from the meta file or name)")
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
    p.add_argument("--json", action="store_true", help="one JSON object per point, then a summary")
    p.set_defaults(func=cmd_walk)
    p = sub.add_parser("serve", help="run the web app (same as python app.py)")
    add_serve_args(p)
    p.set_defaults(func=cmd_serve)
    return parser


def add_serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    p.add_argument("--share", action="store_true", help="create a public Gradio share link")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BookmarksError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
