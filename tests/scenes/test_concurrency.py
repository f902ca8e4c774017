"""The stateful concurrency test in the suite: a few short runs of `PlayMachine` (turns,
user lines, undo, edit, regenerate, fork, presence corrections, a merge, pins, cards,
background preparation held at a slow, failing server, and `prepare`), its invariants
checked after every step. `benchmarks/soak.py` runs it long, with a seed."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings

from tests.scenes.concurrency_machine import PlayMachine

PlayMachine.TestCase.settings = settings(
    max_examples=8, stateful_step_count=25, deadline=None, database=None,
    suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
TestPlayUnderConcurrency = PlayMachine.TestCase
