"""`bookmarks users …` and `bookmarks campaign …` as an owner runs them (real processes,
a real database file): a generated password is printed once and works, only its salted
scrypt hash is stored; list, remove; a campaign's votes exported as CSV/JSONL."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys

from bookmarks.config import load_settings
from bookmarks.store import Store


def run(tmp_path, *args, stdin: str | None = None):
    env = {**os.environ, "BOOKMARKS_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "bookmarks.cli", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=600)


def test_users_add_list_password_remove(tmp_path):
    empty = run(tmp_path, "users", "list")
    assert empty.returncode == 0 and "No users" in empty.stdout
    out = run(tmp_path, "users", "add", "ann", "--role", "annotator")
    assert out.returncode == 0, out.stderr
    password = re.search(r"Password \(shown once; send it to them\): (\S+)", out.stdout).group(1)
    store = Store(load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path / "data")}).db_path)
    assert store.check_password("ann", password) == "annotator"
    assert store.check_password("ann", password + "x") is None
    (stored,) = store._rows("SELECT password_hash FROM users")
    assert stored["password_hash"].startswith("scrypt$16384$8$1$") and password not in str(stored)
    mine = run(tmp_path, "users", "add", "olga", "--role", "owner", "--password-stdin",
               stdin="correct horse battery\n")
    assert mine.returncode == 0 and "Password" not in mine.stdout
    assert store.check_password("olga", "correct horse battery") == "owner"
    twice = run(tmp_path, "users", "add", "ann", "--role", "writer")
    assert twice.returncode == 1 and "already a user named 'ann'" in twice.stderr
    bad = run(tmp_path, "users", "add", "x y", "--role", "annotator")
    assert bad.returncode == 1 and "user name" in bad.stderr and "Traceback" not in bad.stderr
    listed = run(tmp_path, "users", "list")
    assert re.search(r"ann\s+annotator", listed.stdout) and re.search(r"olga\s+owner", listed.stdout)
    again = run(tmp_path, "users", "password", "ann")
    new = again.stdout.rsplit(": ", 1)[1].strip()
    assert store.check_password("ann", new) == "annotator" and store.check_password("ann", password) is None
    gone = run(tmp_path, "users", "remove", "ann")
    assert gone.returncode == 0 and store.user("ann") is None
    assert run(tmp_path, "users", "remove", "ann").returncode == 1
    store.close()


def test_campaign_export(tmp_path):
    from bookmarks.evaluation import arena, campaigns
    from bookmarks.models.llm import run_sync
    from bookmarks.models.testing import ScriptedFakeModel
    from tests.conftest import make_llm
    from tests.engine_helpers import generated_story
    from tests.evaluation.test_arena import ArenaScript

    store = Store(load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path / "data")}).db_path)
    sid = store.add_story(generated_story(120))
    fake = ScriptedFakeModel(default=ArenaScript())
    llms = {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}
    items, _ = run_sync(arena.make_items(store, llms, sid, 2, turns=1))
    store.add_user("ann", "annotator", "password-ann")
    cid = campaigns.create(store, "pilot", items, ["ann"], k=1)
    shown = campaigns.next_item(store, cid, "ann", rng=random.Random(0))
    campaigns.vote(store, cid, shown["item_id"], "ann", "right", rationale="livelier", seconds=7)
    store.close()
    out = run(tmp_path, "campaign", "export", str(cid))
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.splitlines()[:2]
    assert header.startswith("campaign,annotator,source,item") and "seconds" in header
    assert row.startswith("pilot,ann,human,") and "livelier" in row
    as_json = run(tmp_path, "campaign", "export", str(cid), "--format", "jsonl")
    vote = json.loads(as_json.stdout.splitlines()[0])
    assert vote["choice"] == "right" and vote["seconds"] == 7 and vote["annotator"] == "ann"
    listed = run(tmp_path, "campaign", "list")
    assert "pilot" in listed.stdout and "1/2 assignments done" in listed.stdout
    missing = run(tmp_path, "campaign", "export", "99")
    assert missing.returncode == 1 and "no campaign with id 99" in missing.stderr
