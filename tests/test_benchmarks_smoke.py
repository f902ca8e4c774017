"""The benchmark scripts run (short mode) and print their ratios. Speed targets live in
the benchmarks themselves, not in tests: this only checks they work."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT
from tests.fake_server import scripted_server


def bench(*args, env=None):
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / args[0]), *args[1:]],
                         capture_output=True, text=True, timeout=600, cwd=ROOT,
                         env={**os.environ, **(env or {})})
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_engine_overhead_short():
    assert "ratio (without / with reuse)" in bench("engine_overhead.py", "--actions", "1500",
                                                   "--turns", "10")


def test_corrections_short():
    out = bench("corrections.py", "--texts", "4")
    assert "a line's speaker:" in out and "a merge of two characters:" in out and "ratio" in out


def test_scale_short():
    out = bench("scale.py", "--sizes", "2000", "3000", "--turns", "5")
    assert "ratio 3000/2000 actions" in out and "storyline page" in out


def test_parallel_sync_short(tmp_path):
    out = bench("parallel_sync.py", "--latency", "0.05", "--repeat", "1",
                env={"BOOKMARKS_DATA_DIR": str(tmp_path)})
    assert "speed-up" in out


def test_model_benchmarks_on_scripted_server(tmp_path):
    with scripted_server() as url:
        env = {"BOOKMARKS_DATA_DIR": str(tmp_path), "BOOKMARKS_BASE_URL": url,
               "BOOKMARKS_API_KEY": "k"}
        assert "without reuse" in bench("reuse_savings.py", "--points", "3", env=env)
        assert "usable after hygiene" in bench("actor_hygiene.py", "--n", "4", env=env)


def test_fast_turns_short():
    out = bench("fast_turns.py", "--latency", "0.01", "--turns", "2", "--pause", "1",
                "--start", "300", "--every", "100")
    assert "first token p50" in out and "prepared" in out


def test_long_story_and_prefix_order_on_scripted_server(tmp_path):
    with scripted_server() as url:
        env = {"BOOKMARKS_DATA_DIR": str(tmp_path), "BOOKMARKS_BASE_URL": url,
               "BOOKMARKS_API_KEY": "k"}
        out = bench("long_story.py", "--points", "2", "--no-predict", "--noreuse-points", "1",
                    env=env)
        assert "0 failed" in out and "measured/estimated" in out
        assert "block first vs section first" in bench("prefix_order.py", "--actions", "64",
                                                       env=env)


def test_nap_throughput_short():
    out = bench("nap_throughput.py", "--latency", "0.01", "--range", "11:40", "--levels", "1,4")
    assert "identical results" in out and "RESULTS DIFFER" not in out


def test_prose_import_short():
    out = bench("prose_import.py", "--texts", "3", "--copies", "1", "2")
    assert "growth" in out and "lines/s" in out
