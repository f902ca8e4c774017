"""Soak: the stateful concurrency test (`tests/scenes/concurrency_machine.py`) run long.

Many runs of many steps each interleave turns, user lines, undo, edit, regenerate, fork,
presence corrections, a merge, pins, cards, background preparation held at a slow and
failing scripted server, and `prepare`; the invariants are checked after every step (no
duplicate bookmark identity; every stored version read only current lines of its lineage
that its knower witnessed; no actor prompt carried a removed or out-of-sight line; no
background job untracked). The seed is printed first: a failure is replayed with
`--seed N`. Prints what was exercised and how long it took.

    python benchmarks/soak.py --runs 200 --steps 60 [--seed N]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, Phase, seed, settings  # noqa: E402
from hypothesis.stateful import run_state_machine_as_test  # noqa: E402

from tests.scenes.concurrency_machine import PlayMachine  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="state machine runs")
    parser.add_argument("--steps", type=int, default=60, help="steps per run (at most)")
    parser.add_argument("--seed", type=int, help="replay this seed (default: a new one)")
    args = parser.parse_args(argv)
    chosen = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)
    print(f"soak seed {chosen} ({args.runs} runs × up to {args.steps} steps)", flush=True)
    totals: Counter = Counter()
    machines = 0

    class Counted(PlayMachine):
        def teardown(self) -> None:
            nonlocal machines
            machines += 1
            totals.update(self.counts)
            with self.store.transaction():
                totals["versions checked at the end"] += self.store.db["bookmark_versions"].count
            super().teardown()

    seed(chosen)(Counted)
    started = time.perf_counter()
    try:
        run_state_machine_as_test(Counted, settings=settings(
            max_examples=args.runs, stateful_step_count=args.steps, deadline=None,
            database=None, suppress_health_check=list(HealthCheck),
            # no shrinking: with real threads a replay is not always the same run; the
            # first failure is reported as it happened
            phases=[Phase.explicit, Phase.generate]))
    except BaseException:
        print(f"FAILED with seed {chosen}: replay with  python benchmarks/soak.py --seed "
              f"{chosen} --runs {args.runs} --steps {args.steps}", flush=True)
        raise
    seconds = time.perf_counter() - started
    print(f"ok: {machines} runs in {seconds:.0f} s, invariants held after every step")
    for what, n in sorted(totals.items()):
        print(f"  {what}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
