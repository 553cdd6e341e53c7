"""``baccarat --help`` is a list of commands, a line each; a mistyped command gets a suggestion."""

from __future__ import annotations

import subprocess
import sys

from baccarat.cli import SUBCOMMANDS


def baccarat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "baccarat.cli", *args], check=False,
                          capture_output=True, text=True, timeout=60)


def test_the_top_level_help_says_what_the_program_is_and_lists_each_command() -> None:
    result = baccarat("--help")
    assert result.returncode == 0
    assert "Each subcommand lives in a module" not in result.stdout  # not a docstring
    assert "The baccarat table controller" in result.stdout
    for name, (_, line) in SUBCOMMANDS.items():
        assert any(x.split() [:1] == [name] and line in x for x in result.stdout.splitlines())
    assert "baccarat COMMAND --help" in result.stdout
    assert "baccarat demo" in result.stdout


def test_a_mistyped_command_gets_did_you_mean() -> None:
    result = baccarat("hsitory", "--db", "x.db")
    assert result.returncode == 2
    assert "baccarat: unknown command 'hsitory': did you mean 'history'?" in result.stderr
    assert "the commands: replay, odds" in result.stderr
    nothing_near = baccarat("zzz")
    assert "did you mean" not in nothing_near.stderr
    assert "unknown command 'zzz'" in nothing_near.stderr
