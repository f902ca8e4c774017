"""The owner's command line for the web app: `bookmarks users …` (accounts and roles) and
`bookmarks campaign …` (list, export). Registered by `bookmarks/cli.py`; no Gradio here."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bookmarks.store import Store
from bookmarks.store.users import ROLES, new_password


def _store() -> Store:
    from bookmarks.config import load_settings

    return Store(load_settings().db_path)


def cmd_users(args: argparse.Namespace) -> int:
    store = _store()
    if args.users_command == "add":
        password = sys.stdin.readline().rstrip("\n") if args.password_stdin else new_password()
        store.add_user(args.name, args.role, password)
        print(f"Added {args.role} {args.name!r}.")
        if not args.password_stdin:
            print(f"Password (shown once; send it to them): {password}")
        print("They sign in on the app's page; a running app that had no accounts when it "
              "started asks for sign-in once restarted.")
    elif args.users_command == "password":
        password = sys.stdin.readline().rstrip("\n") if args.password_stdin else new_password()
        store.set_password(args.name, password)
        print(f"New password for {args.name!r}" + ("." if args.password_stdin else
                                                   f" (shown once): {password}"))
    elif args.users_command == "remove":
        store.remove_user(args.name)
        print(f"Removed {args.name!r}; their votes stay in the record, their sessions are "
              "refused from the next request.")
    else:
        users = store.users()
        if not users:
            print("No users: the app runs as a single local user on 127.0.0.1. Add one with: "
                  "bookmarks users add NAME --role owner")
            return 0
        print(f"{'name':<24} {'role':<10} {'created':<17} last signed in")
        for u in users:
            print(f"{u['name']:<24} {u['role']:<10} {u['created_at'][:16].replace('T', ' '):<17} "
                  f"{(u['last_seen_at'] or '-')[:16].replace('T', ' ')}")
    return 0


def cmd_campaign(args: argparse.Namespace) -> int:
    from bookmarks.evaluation import campaigns
    from bookmarks.evaluation.export import to_csv, to_jsonl

    store = _store()
    if args.campaign_command == "list":
        for c in store.campaigns():
            rows = campaigns.progress(store, c["id"])
            done = sum(r["assigned"] - r["left"] for r in rows)
            total = sum(r["assigned"] for r in rows)
            print(f"{c['id']:>4}  {c['status']:<6}  {c['name']}  ({len(store.campaign_items(c['id']))} "
                  f"items, k={c['k']}, {done}/{total} assignments done)")
        return 0
    rows = campaigns.export_rows(store, args.id)
    text = to_csv(rows) if args.format == "csv" else to_jsonl(rows)
    if args.out:
        Path(args.out).write_text(text, "utf-8")
        print(f"Wrote {len(rows)} votes to {args.out}.", file=sys.stderr)
    else:
        print(text, end="")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add `users` and `campaign` to the `bookmarks` command."""
    p = sub.add_parser("users", help="accounts for the web app: add, list, remove, password")
    us = p.add_subparsers(dest="users_command", required=True)
    q = us.add_parser("add", help="add a user; prints a generated password to send them")
    q.add_argument("name")
    q.add_argument("--role", choices=ROLES, required=True,
                   help="owner: everything; writer: Library, Play, own scenes; annotator: Annotate")
    q.add_argument("--password-stdin", action="store_true",
                   help="read the password from standard input instead of generating one")
    us.add_parser("list", help="users and their roles")
    q = us.add_parser("remove", help="remove a user (their votes stay)")
    q.add_argument("name")
    q = us.add_parser("password", help="set a new (generated) password")
    q.add_argument("name")
    q.add_argument("--password-stdin", action="store_true")
    p.set_defaults(func=cmd_users)
    p = sub.add_parser("campaign", help="annotation campaigns: list, export votes")
    cs = p.add_subparsers(dest="campaign_command", required=True)
    cs.add_parser("list", help="campaigns with their progress")
    q = cs.add_parser("export", help="a campaign's votes (annotator, item, sides, choice, "
                                     "time taken) as CSV or JSONL")
    q.add_argument("id", type=int)
    q.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    q.add_argument("--out", help="write to this file instead of standard output")
    p.set_defaults(func=cmd_campaign)

