"""Run Bookmarks turns forever on a database (killed by the crash-safety test).

It says where it is on stdout, one line each, so the test can kill it at points it chose
rather than after a sleep: `committed N` right after a turn committed (N turns in the
scene), and `in-transaction` when a turn's writes are all made inside its transaction but
not yet committed — there it waits for a line on stdin (`go`) before committing, so the
test can kill it in the middle of the transaction. The model calls in between (proposal,
synchronization blocks, the actor) are points the test catches on the scripted server.
"""

from __future__ import annotations

import sys

from bookmarks.config import load_settings
from bookmarks.models.llm import run_sync
from bookmarks.scenes.play import generate_turn, round_robin
from bookmarks.services import Services


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(data_dir: str, base_url: str, scene_id: int) -> None:
    settings = load_settings({"BOOKMARKS_DATA_DIR": data_dir, "BOOKMARKS_BASE_URL": base_url,
                              "BOOKMARKS_API_KEY": "k"})
    services = Services.open(settings)
    for llm in services.llms.values():
        llm.cache_get = llm.cache_put = None
    store = services.store
    commit = store.commit_memory

    def commit_memory(*args, **kw):
        with store.transaction():  # re-entrant: the turn's own transaction nests in this one
            result = commit(*args, **kw)
            say("in-transaction")
            if sys.stdin.readline().strip() != "go":
                raise SystemExit(1)
        return result

    store.commit_memory = commit_memory
    while True:
        scene = store.scene(scene_id)
        run_sync(generate_turn(store, services.llms, scene_id, round_robin(store, scene),
                               state_block=8))
        say(f"committed {len(store.turns(scene_id))}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
