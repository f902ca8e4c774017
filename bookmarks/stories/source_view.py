"""A storyline action where it stands in the file it was read from.

The import keeps where each action starts in the file (`Action.line`) and the file's text
(`Story.source`). A writer checking who speaks a line needs the original wording: the tag
the import read or did not find (`"…?" he asked.`), the narration before it, the reply
after it. `around` cuts that piece out: the lines of the action's own paragraph (marked),
what the action before it says, and the action after it — each part capped, so a long
narration paragraph or a script without blank lines never floods the view.
"""

from __future__ import annotations

BEFORE_LINES = 12  # at most this many lines before the action's own paragraph
OWN_LINES = 24  # the action's own paragraph, cut after this many
AFTER_LINES = 12  # the next action's paragraph


def around(source: list[str], starts: dict[int, int | None], index: int) -> list[tuple[int, str, bool]]:
    """(file line number, text, whether it is the action's own) for action `index`, given
    the file's lines and the start lines of the actions near it ({action index: line}, at
    least index-1, index, index+1 and index+2 where they exist). Empty when the action's
    line is not known or not in the file."""
    own = starts.get(index)
    if own is None or not 1 <= own <= len(source):
        return []
    later = sorted(n for i, n in starts.items() if i > index and n is not None and n > own)
    own_end = _paragraph_end(source, own, later[0] - 1 if later else len(source), OWN_LINES)
    prev = starts.get(index - 1)
    first = max(prev if prev is not None and prev < own else own, own - BEFORE_LINES, 1)
    while first < own and not source[first - 1].strip():
        first += 1  # no blank lines to open the view
    after_end = own_end
    start = next((n for n in range(own_end + 1, min(own_end + 3, len(source)) + 1)
                  if source[n - 1].strip()), None)  # the next paragraph, past a blank line or two
    if start is not None and (start > own_end + 1 or start in later):  # (not the rest of a cut one)
        stop = next((n for n in later if n > start), len(source) + 1) - 1
        after_end = _paragraph_end(source, start, stop, AFTER_LINES)
    return [(n, source[n - 1], own <= n <= own_end) for n in range(first, after_end + 1)]


def _paragraph_end(source: list[str], start: int, stop: int, cap: int) -> int:
    """The last line of the paragraph that starts at `start`: before the next blank line,
    at most `stop` (where the next action starts) and `cap` lines long."""
    end = start
    while end < min(stop, start + cap - 1, len(source)) and source[end].strip():
        end += 1
    return end


def render(piece: list[tuple[int, str, bool]]) -> str:
    """The piece as plain text: each line's number, the action's own lines marked `▶`."""
    return "\n".join(f"{'▶' if mine else ' '} {n:>6}  {text}" for n, text, mine in piece)
