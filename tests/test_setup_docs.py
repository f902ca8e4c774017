"""The README's two set-up commands are what CI runs, and what they need is in the project."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    setup = text.split("## Set up (two commands)", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", setup, re.DOTALL)]


def test_ci_runs_readme_command_2_verbatim():
    commands = _readme_commands()
    assert len(commands) == 2, commands
    ci_lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]
    assert commands[1] in ci_lines, "the last command of .ci/run must be README command 2"
    assert ci_lines[-1] == commands[1]


def test_test_command_prepares_the_browser_and_runs_pytest():
    run, test = _readme_commands()
    assert "pip install -e \".[local]\"" in run and run.endswith(".venv/bin/python app.py")
    assert "tests/ensure_browser.py" in test and test.endswith(".venv/bin/python -m pytest")
    assert (ROOT / "tests" / "ensure_browser.py").is_file()
