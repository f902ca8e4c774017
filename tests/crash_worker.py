"""Run Bookmarks turns forever on a database (killed by the crash-safety test)."""

from __future__ import annotations

import sys

from bookmarks.config import load_settings
from bookmarks.llm import run_sync
from bookmarks.play import generate_turn, round_robin
from bookmarks.services import Services


def main(data_dir: str, base_url: str, scene_id: int) -> None:
    settings = load_settings({"BOOKMARKS_DATA_DIR": data_dir, "BOOKMARKS_BASE_URL": base_url,
                              "BOOKMARKS_API_KEY": "k"})
    services = Services.open(settings)
    for llm in services.llms.values():
        llm.cache_get = llm.cache_put = None
    store = services.store
    while True:
        scene = store.scene(scene_id)
        run_sync(generate_turn(store, services.llms, scene_id, round_robin(store, scene),
                               state_block=8))
        print("turn", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
