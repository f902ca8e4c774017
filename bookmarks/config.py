"""Settings: where data lives and which model backend each role uses.

Resolution, most specific first, for each role (actor, memory, judge) and field:
the config file's `[actor]`/`[memory]`/`[judge]` table → `BOOKMARKS_<ROLE>_<FIELD>` →
the config file's `[default]` table → `BOOKMARKS_<FIELD>` → the standard
`OPENAI_BASE_URL` / `OPENAI_API_KEY` → the embedded local model (no base URL and no key).
Settings saved from the UI are applied on top by `with_overrides`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from bookmarks.errors import ConfigError

ROLES = ("actor", "memory", "judge")
STRUCTURED_MODES = ("auto", "json_schema", "json_object", "prompt")
# how the memory role reads a block for several bookmarks (engine/joint_sync.py)
SYNC_MODES = ("auto", "joint", "prefix", "separate")
EMBEDDED = "embedded"
ROLE_DEFAULT_TEMPERATURE = {"actor": 0.8, "memory": 0.0, "judge": 0.0}
ROLE_DEFAULT_MAX_TOKENS = {"actor": 160, "memory": 400, "judge": 300}
DEFAULT_CONTEXT_TOKENS = 8192  # what most servers offer at least; set it per role if smaller


@dataclass(frozen=True)
class RoleConfig:
    role: str
    base_url: str | None = None  # None and no api_key → the embedded model
    api_key: str | None = None
    model: str | None = None
    temperature: float = 0.0
    max_tokens: int = 400
    structured: str = "auto"
    timeout: float = 120.0
    # the model's context window (prompt + reply), in tokens: every request is fitted to it.
    # None: ask the server (vLLM, llama.cpp and others report it), else DEFAULT_CONTEXT_TOKENS
    context_tokens: int | None = None
    # joint (one call per block for all bookmarks), prefix (a call each, the block first),
    # separate (each bookmark on its own); auto: measured per backend (joint_sync.py)
    sync_mode: str = "auto"

    @property
    def embedded(self) -> bool:
        return not self.base_url and not self.api_key

    def describe(self) -> str:
        """Where this role's calls go, with the key masked (safe to show or log)."""
        if self.embedded:
            return f"{self.role}: embedded local model ({self.model or 'SmolLM2-135M'})"
        where = self.base_url or "https://api.openai.com/v1"
        return f"{self.role}: {self.model or '(server default)'} at {where} (key {mask(self.api_key)})"


def mask(secret: str | None) -> str:
    if not secret:
        return "none"
    return secret[:3] + "…" + secret[-2:] if len(secret) > 8 else "…"


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    roles: dict[str, RoleConfig] = field(default_factory=dict)
    gguf_path: str | None = None  # a GGUF to serve instead of the bundled SmolLM2
    embedded_threads: int | None = None
    embedded_ctx: int = 8192
    max_upload_bytes: int = 20 * 1024 * 1024
    budget: int = 3
    scene_window: int = 10
    state_block: int = 64
    # an optional OpenAI-compatible /v1/embeddings backend: RICL ranks past scenes with it
    embedder: RoleConfig | None = None
    background_sync: bool = True  # Play grounds the next speaker's memory ahead
    partial_after: int = 0  # Play answers with ready memory past this many actions (0: wait)

    @property
    def db_path(self) -> Path:
        return self.data_dir / "bookmarks.db"

    def role(self, name: str) -> RoleConfig:
        return self.roles[name]

    def with_overrides(self, overrides: Mapping[str, Mapping[str, object]]) -> Settings:
        roles = dict(self.roles)
        for role, values in overrides.items():
            if role in roles:
                clean = {k: v for k, v in values.items() if v not in (None, "")}
                roles[role] = replace(roles[role], **clean)
        return replace(self, roles=roles)


def _int(value: str | None, name: str, default: int) -> int:
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {value!r}.") from None


def _float(value: object, name: str, default: float) -> float:
    if value in (None, ""):
        return default
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, not {value!r}.") from None


def _context(value: object, role: str) -> int | None:
    if value in (None, ""):
        return None
    tokens = int(_float(value, f"{role} context_tokens", DEFAULT_CONTEXT_TOKENS))
    if tokens < 1024:
        raise ConfigError(f"{role} context_tokens must be at least 1024, not {tokens}.")
    return tokens


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    data_dir = Path(env.get("BOOKMARKS_DATA_DIR") or Path.home() / ".local/share/bookmarks")
    config_path = Path(env.get("BOOKMARKS_CONFIG") or data_dir / "config.toml")
    file_cfg: dict = {}
    if config_path.is_file():
        try:
            file_cfg = tomllib.loads(config_path.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{config_path}: the config file is not valid TOML ({exc}).") from None
    default = file_cfg.get("default", {})

    def pick(role: str, key: str) -> object:
        for value in (file_cfg.get(role, {}).get(key), env.get(f"BOOKMARKS_{role.upper()}_{key.upper()}"),
                      default.get(key), env.get(f"BOOKMARKS_{key.upper()}")):
            if value not in (None, ""):
                return value
        if key in ("base_url", "api_key"):
            return env.get(f"OPENAI_{key.upper()}") or None
        return None

    roles = {}
    for role in ROLES:
        structured = str(pick(role, "structured") or "auto")
        if structured not in STRUCTURED_MODES:
            raise ConfigError(f"structured output mode for {role} must be one of "
                              f"{', '.join(STRUCTURED_MODES)}, not {structured!r}.")
        sync_mode = str(pick(role, "sync_mode") or "auto")
        if sync_mode not in SYNC_MODES:
            raise ConfigError(f"sync mode for {role} must be one of {', '.join(SYNC_MODES)}, "
                              f"not {sync_mode!r}.")
        roles[role] = RoleConfig(
            role=role,
            base_url=pick(role, "base_url"),  # type: ignore[arg-type]
            api_key=pick(role, "api_key"),  # type: ignore[arg-type]
            model=pick(role, "model"),  # type: ignore[arg-type]
            temperature=_float(pick(role, "temperature"), f"{role} temperature",
                               ROLE_DEFAULT_TEMPERATURE[role]),
            max_tokens=int(_float(pick(role, "max_tokens"), f"{role} max_tokens",
                                  ROLE_DEFAULT_MAX_TOKENS[role])),
            structured=structured,
            timeout=_float(pick(role, "timeout"), f"{role} timeout", 120.0),
            context_tokens=_context(pick(role, "context_tokens"), role),
            sync_mode=sync_mode,
        )
    embed_url = (file_cfg.get("embedder", {}).get("base_url")
                  or env.get("BOOKMARKS_EMBEDDER_BASE_URL"))
    embedder = RoleConfig(
        role="embedder", base_url=embed_url,
        api_key=file_cfg.get("embedder", {}).get("api_key") or env.get("BOOKMARKS_EMBEDDER_API_KEY")
        or "none",
        model=file_cfg.get("embedder", {}).get("model") or env.get("BOOKMARKS_EMBEDDER_MODEL"),
    ) if embed_url else None
    return Settings(
        data_dir=data_dir,
        roles=roles,
        embedder=embedder,
        gguf_path=env.get("BOOKMARKS_GGUF") or default.get("gguf_path"),
        embedded_threads=_int(env.get("BOOKMARKS_THREADS"), "BOOKMARKS_THREADS", 0) or None,
        embedded_ctx=_int(env.get("BOOKMARKS_CTX"), "BOOKMARKS_CTX", 8192),
        max_upload_bytes=_int(env.get("BOOKMARKS_MAX_UPLOAD_MB"), "BOOKMARKS_MAX_UPLOAD_MB", 20)
        * 1024 * 1024,
        budget=_int(env.get("BOOKMARKS_BUDGET"), "BOOKMARKS_BUDGET", 3),
        background_sync=(env.get("BOOKMARKS_BACKGROUND_SYNC") or "1").strip().lower()
        not in ("0", "false", "no", "off"),
    )

ENGINE_LIMITS = {"budget": (1, 8), "state_block": (8, 512), "scene_window": (2, 50),
                 "partial_after": (0, 1_000_000)}


def apply_saved(base: Settings, saved: dict[str, dict], engine: dict | None = None) -> Settings:
    """Settings from the environment with the UI's saved values on top (None: not set)."""
    if engine:
        base = replace(base, **{k: v for k, v in engine.items() if k in ENGINE_LIMITS})
    roles = dict(base.roles)
    for role, entry in saved.items():
        if role in roles:
            # None means "not set", except for a key, where it means "cleared"
            roles[role] = replace(roles[role], **{k: v for k, v in entry.items()
                                                  if v is not None or k == "api_key"})
    return replace(base, roles=roles)
