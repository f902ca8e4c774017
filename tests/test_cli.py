"""The `bookmarks` command as a user runs it (a real process, a real database file)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import STORIES


def run(tmp_path, *args):
    env = {**os.environ, "BOOKMARKS_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "bookmarks.cli", *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_import_and_list(tmp_path):
    story = tmp_path / "duet.txt"
    story.write_text("## One\nANNA: Hello.\nBEN: Hi.\n[They sit.]\n")
    out = run(tmp_path, "import", str(story), "--title", "Duet")
    assert out.returncode == 0, out.stderr
    assert "Imported story 1: 'Duet' — 3 actions, 2 characters (script)." in out.stdout
    listed = run(tmp_path, "list")
    assert listed.returncode == 0 and "Duet" in listed.stdout and "3" in listed.stdout


def test_import_again_reads_the_kept_file_with_the_current_rules(tmp_path):
    story = tmp_path / "duet.txt"
    story.write_text("## One\nANNA: Hello.\nBEN: Hi.\n[They sit.]\n")
    assert run(tmp_path, "import", str(story)).returncode == 0
    story.unlink()  # the story's own copy of the file is read, not the file
    again = run(tmp_path, "import", "--again", "1")
    assert again.returncode == 0, again.stderr
    assert "read story 1 ('Duet') as it is stored: nothing to import again" in again.stdout
    wrong = run(tmp_path, "import", "--again", "duet.txt")
    assert wrong.returncode == 1 and "--again takes a story's id" in wrong.stderr
    assert "Traceback" not in wrong.stderr


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


def test_walk_json_on_scripted_server(tmp_path):
    """`bookmarks walk --json` end to end over HTTP against a scripted OpenAI-compatible server."""
    import json

    from tests.fake_server import scripted_server

    story = tmp_path / "duet.jsonl"
    rows = [{"character": "Ada" if i % 2 else "Ben", "text": f"Line {i} about the harbour gate."}
            for i in range(1, 121)]
    story.write_text("\n".join(json.dumps(r) for r in rows))
    assert run(tmp_path, "import", str(story)).returncode == 0
    with scripted_server() as url:
        env_extra = {"BOOKMARKS_BASE_URL": url, "BOOKMARKS_API_KEY": "test"}
        out = run_env(tmp_path, env_extra, "walk", "--story", "1", "--method", "bookmarks",
                      "--character", "Ada", "--points", "3", "--json")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.strip().splitlines()]
    points, summary = lines[:-1], lines[-1]
    assert [p["point"] for p in points] == sorted(p["point"] for p in points) and len(points) == 3
    assert points[0]["initialized"] and points[1]["reused"]
    assert summary["summary"] and summary["points"] == 3
    for key in ("reused", "initialized", "actions_read", "actions_read_without_reuse", "tokens",
                "tokens_without_reuse"):
        assert key in summary
    assert summary["actions_read_without_reuse"] > summary["actions_read"] > 0


def run_env(tmp_path, extra, *args):
    env = {**os.environ, "BOOKMARKS_DATA_DIR": str(tmp_path / "data"), **extra}
    return subprocess.run([sys.executable, "-m", "bookmarks.cli", *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_eval_nap_mcq_and_export_over_http(tmp_path):
    import json

    from tests.fake_server import scripted_server

    assert run(tmp_path, "import", str(STORIES / "saltmarsh_lighthouse.jsonl")).returncode == 0
    with scripted_server() as url:
        extra = {"BOOKMARKS_BASE_URL": url, "BOOKMARKS_API_KEY": "test"}
        nap = run_env(tmp_path, extra, "eval", "nap", "--story", "1", "--points", "2", "--k", "2")
        assert nap.returncode == 0, nap.stderr
        summary = json.loads(nap.stdout.strip().splitlines()[-1])
        assert summary["kind"] == "nap" and summary["items"] == 2 and summary["k"] == 2
        assert set(summary["best@k"]) == {"emotion", "intent", "causality", "position", "content",
                                          "mean"}
        mcq = run_env(tmp_path, extra, "eval", "mcq", "--story", "1", "--limit", "3",
                      "--method", "ricl")
        assert mcq.returncode == 0, mcq.stderr
        m = json.loads(mcq.stdout.strip().splitlines()[-1])
        assert m["items"] == 3 and m["invalid"] == 0 and 0 <= m["accuracy"] <= 100
    exported = run(tmp_path, "eval", "export", str(summary["run"]), "--format", "csv")
    assert exported.returncode == 0 and exported.stdout.startswith("run_id,kind,method,point")
    eff = run(tmp_path, "eval", "efficiency", str(summary["run"]))
    rows = [json.loads(x) for x in eff.stdout.splitlines()]
    assert [r["bucket"] for r in rows if "bucket" in r] == [
        "0-25%", "25-50%", "50-75%", "75-100%"]
    assert all("bucket" in r or "model_use" in r for r in rows)  # the run's model use, apart


def test_import_with_model_assisted_attribution(tmp_path):
    """`bookmarks import --attribute` shows the model's suggestions and applies those at or
    above the threshold (over real HTTP against a scripted server)."""
    from tests.fake_server import scripted_server

    # an untagged quotation after narration about both speakers: the rules leave it to the
    # model (after a narration of the scene alone, the turns go on: it would be Anna's)
    text = ('Anna looked at the sea.\n\n"We should go," said Anna.\n\n"Not yet," said Bo.\n\n'
            'Anna and Bo looked at each other.\n\n"The tide is turning."\n')
    path = tmp_path / "sea.txt"
    path.write_text(text)
    with scripted_server() as url:
        out = run_env(tmp_path, {"BOOKMARKS_BASE_URL": url, "BOOKMARKS_API_KEY": "k"},
                      "import", str(path), "--format", "prose", "--attribute")
    assert out.returncode == 0, out.stderr
    assert "✓ [5] Anna (0.90): \"The tide is turning.\"" in out.stdout
    listed = run_env(tmp_path, {}, "list")
    assert "sea" in listed.stdout.lower()


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    """`bookmarks line --to-check | head -1`: the pipe closes while the list is printed."""
    talk = "".join(f'"This is line {k} of our long talk by the gate."\n\n' for k in range(3000))
    story = tmp_path / "talk.txt"
    story.write_text('"Hello, Ben," said Anna.\n\n"Hello, Anna," said Ben.\n\n' + talk)
    assert "3000 lines to check" in run(tmp_path, "import", str(story)).stdout
    env = {**os.environ, "BOOKMARKS_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "bookmarks.cli", "line", "--story", "1",
                             "--to-check"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert b"[turn-taking]: This is line 0 of" in proc.stdout.readline()
    proc.stdout.close()  # the reader is gone
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0 and "Traceback" not in err and "BrokenPipe" not in err
