from __future__ import annotations

from pathlib import Path

import pytest

from bookmarks.config import RoleConfig
from bookmarks.models.llm import LLM
from bookmarks.models.testing import ScriptedFakeModel
from bookmarks.store import Store

ROOT = Path(__file__).resolve().parent.parent
STORIES = ROOT / "stories"


async def _no_sleep(_: float) -> None:
    return None


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "test.db")
    yield s
    s.close()


def make_llm(fake: ScriptedFakeModel, store: Store | None = None, role: str = "memory",
             temperature: float = 0.0) -> LLM:
    return LLM(model=fake, config=RoleConfig(role=role, temperature=temperature),
               log=store.log_call if store else None,
               cache_get=store.cache_get if store else None,
               cache_put=store.cache_put if store else None, sleep=_no_sleep)
