"""The options commands share are defined once (``cli/common.py``), with their help.

``--log-level`` and ``--log-format`` were written out in four command modules, with four
helps (two of them none); they now come from ``add_log_arguments`` alone.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from baccarat.cli import build_parser

SRC = Path(__file__).resolve().parents[2] / "src" / "baccarat"
LOGGING_COMMANDS = ("run", "pit", "record")


def test_log_level_is_defined_in_one_module() -> None:
    """Defined: given to ``add_argument`` (``sim floor`` passes it on to its daemons)."""
    defined = re.compile(r'add_argument\(\s*"--log-(level|format)"')
    holders = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if defined.search(path.read_text(encoding="utf-8"))
    )
    assert holders == ["cli/common.py"]


@pytest.mark.parametrize("command", [*LOGGING_COMMANDS, "sim"])
def test_each_command_that_logs_explains_its_log_options(command: str) -> None:
    argv = [command, "floor"] if command == "sim" else [command]
    parser = build_parser(command)
    sub = parser._subparsers._group_actions[0].choices[command]  # noqa: SLF001 - argparse's only way in
    if command == "sim":
        sub = sub._subparsers._group_actions[0].choices["floor"]  # noqa: SLF001
    text = " ".join(sub.format_help().split())
    assert "--log-level LEVEL" in text, argv
    assert "DEBUG, INFO, WARNING, ERROR, CRITICAL" in text, argv
    if command != "sim":
        assert "--log-format {text,json}" in text
        assert "$BACCARAT_LOG_FORMAT" in text


@pytest.mark.parametrize("command", LOGGING_COMMANDS)
def test_a_level_is_taken_in_any_case_and_a_wrong_one_is_named(command: str) -> None:
    parser = build_parser(command)
    required = {
        "run": ["--config", "x.toml"], "pit": ["--web", "0"], "record": ["--db", "x.db"]
    }[command]
    args = parser.parse_args([command, *required, "--log-level", "debug"])
    assert args.log_level == "DEBUG"
    done = subprocess.run(
        [sys.executable, "-m", "baccarat.cli", command, *required, "--log-level", "LOUD"],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert done.returncode == 2
    assert "--log-level: invalid choice: 'LOUD'" in done.stderr
