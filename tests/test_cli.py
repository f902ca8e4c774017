"""The `bookmarks` command as a user runs it (a real process, a real database file)."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import STORIES


def run(tmp_path, *args):
    env = {**os.environ, "BOOKMARKS_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "bookmarks.cli", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_import_and_list(tmp_path):
    story = tmp_path / "duet.txt"
    story.write_text("## One\nANNA: Hello.\nBEN: Hi.\n[They sit.]\n")
    out = run(tmp_path, "import", str(story), "--title", "Duet")
    assert out.returncode == 0, out.stderr
    assert "Imported story 1: 'Duet' — 3 actions, 2 characters (script)." in out.stdout
    listed = run(tmp_path, "list")
    assert listed.returncode == 0 and "Duet" in listed.stdout and "3" in listed.stdout


def test_malformed_file_exits_nonzero_naming_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"character": "A", "text": "ok"}\n{"character": "B", "text": \n')
    out = run(tmp_path, "import", str(bad))
    assert out.returncode == 1
    assert out.stderr.startswith("error: bad.jsonl, line 2: not valid JSON")
    assert "Traceback" not in out.stderr


def test_missing_file(tmp_path):
    out = run(tmp_path, "import", str(tmp_path / "nope.txt"))
    assert out.returncode == 1 and "no such file" in out.stderr


def test_list_bundled(tmp_path):
    out = run(tmp_path, "list", "--bundled")
    assert out.returncode == 0
    titles = [p for p in STORIES.glob("*.meta.json")]
    assert len(out.stdout.strip().splitlines()) == 1 + len(titles)
