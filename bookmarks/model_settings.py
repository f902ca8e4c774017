"""Settings changed from the UI: per-role endpoints saved in the database (keys masked
when shown back), applied to the running services, and a connection test."""

from __future__ import annotations

import time
from dataclasses import replace

from bookmarks.config import ENGINE_LIMITS, ROLES, apply_saved, mask
from bookmarks.errors import BookmarksError
from bookmarks.models.backends import build_llms
from bookmarks.models.llm import run_sync
from bookmarks.services import Services

FIELDS = ("base_url", "api_key", "model", "temperature")


def current(services: Services) -> dict[str, dict]:
    """What the form shows: every field but the key, which is masked."""
    out = {}
    for role in ROLES:
        cfg = services.settings.role(role)
        out[role] = {"base_url": cfg.base_url or "", "model": cfg.model or "",
                     "temperature": cfg.temperature, "api_key_masked": mask(cfg.api_key),
                     "describe": cfg.describe()}
    return out


def save(services: Services, values: dict[str, dict]) -> None:
    """Store per-role overrides; an empty key field keeps the stored key; "-" clears it."""
    saved = services.store.get_setting("roles", {})
    for role, fields in values.items():
        if role not in ROLES:
            continue
        entry = dict(saved.get(role, {}))
        for key in ("base_url", "model"):
            entry[key] = (fields.get(key) or "").strip() or None
        temp = fields.get("temperature")
        if temp is not None:
            if not 0 <= float(temp) <= 2:
                raise BookmarksError(f"The {role} temperature must be between 0 and 2.")
            entry["temperature"] = float(temp)
        key = (fields.get("api_key") or "").strip()
        if key == "-":
            entry["api_key"] = None  # cleared: the role goes back to no key
        elif key:
            entry["api_key"] = key
        saved[role] = entry
    services.store.set_setting("roles", saved)
    services.settings = apply_saved(services.env_settings, saved,
                                    services.store.get_setting("engine", {}))
    services.llms.update(build_llms(services.settings, services.store))




def save_engine(services: Services, values: dict[str, int]) -> None:
    """Default budget K, state block size and scene window, validated and saved."""
    clean = {}
    for key, (lo, hi) in ENGINE_LIMITS.items():
        given = values.get(key)
        value = int(getattr(services.settings, key) if given in (None, "") else given)
        if not lo <= value <= hi:
            raise BookmarksError(f"{key.replace('_', ' ')} must be between {lo} and {hi}.")
        clean[key] = value
    services.store.set_setting("engine", clean)
    services.settings = replace(services.settings, **clean)




def test_connection(services: Services, role: str) -> str:
    llm = services.llms[role]
    started = time.perf_counter()
    try:
        reply = run_sync(llm.text([{"role": "user", "content": "Reply with the word OK."}],
                                  purpose="test-connection", max_tokens=5, cache=False))
    except BookmarksError as exc:
        return f"{role}: failed — {exc}"
    return (f"{role}: OK — {llm.model.name} answered {reply.text.strip()[:40]!r} in "
            f"{time.perf_counter() - started:.1f} s")
