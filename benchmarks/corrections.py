"""A writer's corrections on a novel-length story: one line's speaker, and a merge of two
characters, each in a real SQLite store, with what is kept between derivations of presence
(the narration each paragraph read, a sentence's stage verbs) and without it (cleared).
Prints the seconds and the ratio of the two; the stories are the attribution gold texts
joined into one prose file, as `prose_import.py` builds it.

    python benchmarks/corrections.py [--texts N]

Measured 2026-12-07 on the 2-core machine, all gold texts (58,632 lines; 14,959 actions,
470 speaking characters), one run: stored in 8.65 s; a line's speaker 0.65 s with what is
kept, 8.46 s reading it all again (ratio 0.08); a merge of two characters 2.66 s with the
stage verbs kept, 8.97 s without (ratio 0.30).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    from prose_import import text_of

    from bookmarks.store import Store
    from bookmarks.stories.directions import verb_hits
    from bookmarks.stories.importers import parse_story

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=None, help="only the first N gold texts (a short run)")
    args = ap.parse_args()
    story = parse_story(text_of(1, args.texts), "novel.txt", fmt="prose")
    with tempfile.TemporaryDirectory() as folder:
        store = Store(str(Path(folder) / "bench.sqlite"))
        took = timed(lambda: store.add_story(story))
        sid = store.list_stories()[0].id
        counts = store.action_counts(sid)
        names = [n for n in sorted(counts, key=lambda n: -counts[n]) if n != "narration"]
        print(f"{len(story.actions):,} actions, {len(names)} speaking characters: stored in {took:.2f} s")
        line = next(a.index for a in store.actions(sid) if a.character == names[0])

        def correct(to: str) -> float:
            return timed(lambda: store.correct_line(sid, line, to))

        def merge(keep: str, gone: str, cold: bool) -> float:
            if cold:
                verb_hits.cache_clear()
                store._reads = None  # noqa: SLF001 - what derive_presence keeps, dropped
            return timed(lambda: store.merge_characters(sid, keep, gone))

        warm_line = correct(names[1])
        store._reads = None  # noqa: SLF001
        verb_hits.cache_clear()
        cold_line = correct(names[0])
        print(f"a line's speaker: {warm_line:.2f} s kept, {cold_line:.2f} s read again: "
              f"ratio {warm_line / cold_line:.2f}")
        warm_merge = merge(names[2], names[3], cold=False)
        cold_merge = merge(names[4], names[5], cold=True)
        print(f"a merge of two characters: {warm_merge:.2f} s kept, {cold_merge:.2f} s read again: "
              f"ratio {warm_merge / cold_merge:.2f}")


if __name__ == "__main__":
    main()
