"""Make sure the browser test has a browser: step 2 of README command 2.

The browser test drives Debian's Chromium through Playwright. If no Chromium is found
(see tests/tools.py), install Debian's package when this runs as root with apt-get (as on
a fresh Debian machine or in CI), or with passwordless sudo; otherwise say which command
to run and go on, so the rest of the suite still runs (the browser test then fails naming
that command). Always exits 0: a missing browser fails one test, not the whole run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

try:
    from tests.tools import INSTALL_CHROMIUM, chromium
except ImportError:  # run as a script: tests/ is this file's folder
    from tools import INSTALL_CHROMIUM, chromium  # type: ignore[no-redef]


def main() -> int:
    found = chromium()
    if found:
        print(f"browser: {found}")
        return 0
    if shutil.which("apt-get") is None:
        print("browser: Chromium not found and apt-get is not available; the browser test "
              "will fail until Chromium is installed (Debian: " + INSTALL_CHROMIUM + ")")
        return 0
    prefix: list[str] = []
    if os.geteuid() != 0:
        if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"],
                                                   capture_output=True).returncode == 0:
            prefix = ["sudo", "-n"]
        else:
            print("browser: Chromium not found; install it once with: sudo sh -c '"
                  + INSTALL_CHROMIUM + "' (the browser test fails until then)")
            return 0
    print("browser: installing Debian's chromium (apt-get) …", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(prefix + cmd, env=env, stdout=subprocess.DEVNULL)
        if done.returncode != 0:
            print(f"browser: {' '.join(prefix + cmd)} failed (exit {done.returncode}); the "
                  "browser test will fail until Chromium is installed", file=sys.stderr)
            return 0
    print(f"browser: {chromium()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
