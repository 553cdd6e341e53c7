"""``baccarat --help`` is a list of commands, a line each; a mistyped command gets a suggestion."""

from __future__ import annotations

import argparse
import subprocess
import sys

from baccarat.cli import SUBCOMMANDS, build_parser


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


def _options_without_help(parser: argparse.ArgumentParser, path: list[str]) -> list[str]:
    found = []
    # argparse has no public list of a parser's options: its private one, read only
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, sub in action.choices.items():
                found += _options_without_help(sub, [*path, name])
        elif action.help is None and action.dest != "help":
            found.append(f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}")
    return found


def test_every_option_of_every_command_has_help() -> None:
    missing = []
    for name in SUBCOMMANDS:
        parser = build_parser(name)
        commands = next(a for a in parser._actions  # noqa: SLF001
                        if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
        missing += _options_without_help(commands.choices[name], [name])
    assert missing == []
