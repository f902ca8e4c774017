"""Prose import at novel length: the attribution gold texts (public domain, 48 texts)
joined into one long prose file, imported once at a size and once at a multiple of it; prints
the seconds, lines per second and the ratio of the two times to the ratio of the sizes
(1.0 = linear; a quadratic step shows as the size ratio again).

    python benchmarks/prose_import.py [--copies 1 2] [--texts N]

Measured 2026-12-07 on the 2-core machine (all gold folders, 58,632 lines, 14,959 actions, a
cast of hundreds): `--copies 1 1` (two imports) took 47.1 s of wall time, median of three,
where the code before the names were searched as a prefix tree (`names.one_of`), the
several-people check read the text once and `_core` was cached took 174.4 s: 0.28 of it.
Imported one by one, the same texts take 12.8 s (15.3 s before): the bigger the cast, the
more a flat alternation of its names cost.

Measured 2026-12-03 evening on the 2-core machine (all seventeen gold folders): 37,657 and
75,315 lines took 20.8 s and 46.9 s (growth 1.12; with the cast's mentions cache turned off,
30.7 s and 60.7 s, growth 0.99). That afternoon (fifteen folders): 34,584 and 69,169 lines
in 24.9 s and 49.6 s (growth 1.00). On 2026-12-02 (fewer texts): 29,409 and 58,819
lines in 17.2 s and 33.7 s (growth 0.98); the code before paragraphs were found by identity
took 29.9 s and 141.0 s (growth 2.36).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def text_of(copies: int, limit: int | None) -> bytes:
    files = sorted((ROOT / "benchmarks" / "gold").glob("attribution*/*.txt"))[:limit]
    texts = [p.read_text("utf-8") for p in files]
    return ("\n\n".join(texts * copies)).encode()


def main() -> None:
    from bookmarks.stories.importers import parse_story

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, nargs=2, default=[1, 2], help="two sizes, in copies of the texts")
    ap.add_argument("--texts", type=int, default=None, help="only the first N gold texts (a short run)")
    args = ap.parse_args()
    rows = []
    for copies in args.copies:
        data = text_of(copies, args.texts)
        lines = data.count(b"\n") + 1
        start = time.perf_counter()
        story = parse_story(data, "novel.txt", fmt="prose")
        took = time.perf_counter() - start
        rows.append((lines, took))
        print(f"{lines:7d} lines, {len(story.actions):6d} actions: {took:6.1f} s "
              f"({lines / took:,.0f} lines/s)")
    (l1, t1), (l2, t2) = rows
    print(f"time ratio {t2 / t1:.2f} for a size ratio {l2 / l1:.2f}: "
          f"growth {(t2 / t1) / (l2 / l1):.2f} (1.0 = linear)")


if __name__ == "__main__":
    main()
