"""Where the tests find the programs they drive: tools that come with Python packages are
looked up next to the interpreter running the tests (a venv's `bin/`, which need not be on
PATH), then on PATH; the browser is Debian's Chromium, or a Chromium that Playwright
installed itself. A missing tool fails its test with the exact command that installs it."""

from __future__ import annotations

import glob
import os
import shutil
import sys
from pathlib import Path

INSTALL_CHROMIUM = "apt-get update && apt-get install -y chromium"


def python_tool(name: str) -> str | None:
    """A console script installed into the running interpreter's environment, else PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def chromium() -> str | None:
    """Debian's Chromium, else one Playwright downloaded into its cache (where it could)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    cache = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache" / "ms-playwright")
    own = sorted(glob.glob(f"{cache}/chromium-*/chrome-linux*/chrome"))
    return own[-1] if own else None
