"""`bookmarks line`: show or correct one line of a story's storyline — its speaker (a
character, a new name who joins the cast, or narration) and its text — as the Library's
"Correct a line" does. Memory that read the line is dropped (`Store.correct_line`).
`--to-check` lists the lines whose speaker the import was less sure of, with why
(`Action.check`; `--reason R` for one reason's lines) and where each starts in the file;
correcting one, or giving it its own speaker again, clears its mark. Showing a line prints
it where it stands in the file the story was read from (its tag and the lines around it,
`Store.source_around`)."""

from __future__ import annotations

import argparse

from bookmarks.errors import BookmarksError, NotFoundError
from bookmarks.stories.source_view import render


def cmd_line(args: argparse.Namespace) -> int:
    from bookmarks.services import Services

    store = Services.open().store
    story = store.story(args.story)  # a NotFoundError names the story id
    if args.reason and not args.to_check:
        raise BookmarksError("--reason picks among the lines to check: give --to-check too.")
    if args.to_check:
        reasons = store.check_reasons(story.id)
        if args.reason and args.reason not in reasons:
            known = ", ".join(f"“{r}” ({n})" for r, n in reasons.items()) or "none"
            raise BookmarksError(f"No line of “{story.title}” is to check for “{args.reason}”; "
                                 f"its reasons: {known}.")
        marked = [a for a in store.actions(story.id)
                  if a.check and (not args.reason or a.check == args.reason)]
        for a in marked:
            where = f" (file line {a.line})" if a.line else ""
            print(f"{a.index}{where}  {a.character} [{a.check}]: {a.text}")
        why = f" for {args.reason}" if args.reason else ""
        print(f"{len(marked)} line{'' if len(marked) == 1 else 's'} to check{why} in “{story.title}”.")
        return 0
    if args.index is None:
        raise BookmarksError("Give the number of the line to show or correct, or --to-check.")
    found = store.actions(story.id, args.index, args.index)
    if not found:
        raise NotFoundError(f"“{story.title}” has no action {args.index}: its actions are "
                            f"numbered 1 to {story.n_actions}.")
    if args.speaker is None and args.text is None:
        why = f" [check: {found[0].check}]" if found[0].check else ""
        print(f"{found[0].index}  {found[0].character}{why}: {found[0].text}")
        if piece := store.source_around(story.id, args.index):
            print(f"\nIn the file (lines {piece[0][0]}–{piece[-1][0]}; ▶ this line):\n{render(piece)}")
        return 0
    name = store.correct_line(story.id, args.index, args.speaker or found[0].character,
                              args.text)
    print(f"Line {args.index} of “{story.title}” is now "
          + ("narration." if name == "narration" else f"{name}’s."))
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("line", help="show or correct one line of a story: its speaker or text")
    p.add_argument("--story", type=int, required=True, help="story id (see: bookmarks list)")
    p.add_argument("index", type=int, nargs="?",
                   help="the action's number (from 1, as the Library shows)")
    p.add_argument("--to-check", action="store_true",
                   help="list the lines whose speaker the import was less sure of, with why")
    p.add_argument("--reason", help="with --to-check: only the lines of this reason (as the "
                                    "list and the import's count name it, e.g. 'turn-taking')")
    p.add_argument("--speaker", help="give the line to this character, a new name or "
                                     "'narration'")
    p.add_argument("--text", help="the line's new text")
    p.set_defaults(func=cmd_line)
