"""Strict configuration (issue 30): booleans and numbers are not guessed from strings.

A TOML file gives typed values: a string where a boolean or a number is due, or a
fraction where a whole number is, is an error naming the key and the file. The
environment gives strings: a boolean or a number field takes exactly a JSON literal
(``true``, ``false``, ``8883``, ``0.02``), anything else is an error naming the variable.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from baccarat.controller.config import ConfigError, load_config


@pytest.fixture(autouse=True)
def no_baccarat_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only what the test sets counts: drop any BACCARAT_* variable of the environment."""
    for name in list(os.environ):
        if name.startswith("BACCARAT_"):
            monkeypatch.delenv(name)


def table_toml(tmp_path: Path, extra: str = "", journal: str = "") -> Path:
    path = tmp_path / "table.toml"
    path.write_text(
        f'table = "T1"\n{extra}\n[journal]\nfolder = "{tmp_path}/j"\n{journal}\n'
    )
    return path


@pytest.mark.parametrize(
    ("journal", "key", "said"),
    [
        ('fsync = "yes"', "journal.fsync", "Input should be a valid boolean, not the string 'yes'"),
        ('fsync = "true"', "journal.fsync", "Input should be a valid boolean, not the string "
                                            "'true'"),
        ("fsync = 1", "journal.fsync", "Input should be a valid boolean, not 1"),
        ('retention = "200"', "journal.retention", "Input should be a valid integer, not the "
                                                   "string '200'"),
        ("retention = 200.0", "journal.retention", "Input should be a valid integer, not 200.0"),
    ],
)
def test_a_wrong_kind_in_the_file_is_an_error_naming_the_key_and_the_file(
    tmp_path: Path, journal: str, key: str, said: str
) -> None:
    path = table_toml(tmp_path, journal=journal)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    text = str(raised.value)
    assert text.startswith(f"{path}: 1 problem(s)\n")
    assert f"  {key}: {said}" in text


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ('allow_test_decks = "yes"', "allow_test_decks"),
        ('[broker]\nport = "1883"', "broker.port"),
        ('[broker]\ntls = "false"', "broker.tls"),
        ("[broker]\nkeepalive = 15.5", "broker.keepalive"),
        ('[edge]\nadvantage = "0.02"', "edge.advantage"),
        ('[device]\nkind = "usb"\nusb_vendor = "0x1209"', "device.usb_vendor"),
    ],
)
def test_every_section_is_strict(tmp_path: Path, extra: str, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"\n  {key}: Input should be a valid"):
        load_config(table_toml(tmp_path, extra))


def test_typed_values_are_taken_and_a_whole_number_serves_a_fraction(tmp_path: Path) -> None:
    extra = "allow_test_decks = true\n[broker]\nport = 8883\n[edge]\nadvantage = 1"
    config = load_config(table_toml(tmp_path, extra, journal="fsync = false\nretention = 7"))
    assert config.allow_test_decks is True
    assert config.broker.port == 8883
    assert config.edge.advantage == 1.0
    assert config.journal.fsync is False
    assert config.journal.retention == 7
    assert config.journal.folder == tmp_path / "j"  # a path is a string in TOML


@pytest.mark.parametrize(
    ("variable", "value", "field", "expected"),
    [
        ("BACCARAT_JOURNAL__FSYNC", "true", ("journal", "fsync"), True),
        ("BACCARAT_JOURNAL__FSYNC", "false", ("journal", "fsync"), False),
        ("BACCARAT_ALLOW_TEST_DECKS", "true", ("allow_test_decks",), True),
        ("BACCARAT_BROKER__PORT", "8883", ("broker", "port"), 8883),
        ("BACCARAT_EDGE__ADVANTAGE", "0.02", ("edge", "advantage"), 0.02),
        ("BACCARAT_EDGE__ADVANTAGE", "1", ("edge", "advantage"), 1.0),
        ("BACCARAT_TABLE", "123", ("table",), "123"),  # a text is taken as written
        ("BACCARAT_BROKER", '{"port": 8883, "tls": false}', ("broker", "port"), 8883),
    ],
)
def test_the_environments_exact_spellings_are_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    variable: str, value: str, field: tuple[str, ...], expected: object,
) -> None:
    monkeypatch.setenv(variable, value)
    config: object = load_config(table_toml(tmp_path))
    for name in field:
        config = getattr(config, name)
    assert config == expected
    assert type(config) is type(expected)


@pytest.mark.parametrize(
    ("variable", "value", "key"),
    [
        ("BACCARAT_JOURNAL__FSYNC", "yes", "journal.fsync"),
        ("BACCARAT_JOURNAL__FSYNC", "1", "journal.fsync"),
        ("BACCARAT_JOURNAL__FSYNC", "True", "journal.fsync"),
        ("BACCARAT_JOURNAL__FSYNC", "", "journal.fsync"),
        ("BACCARAT_ALLOW_TEST_DECKS", "on", "allow_test_decks"),
        ("BACCARAT_BROKER__PORT", "8883.0", "broker.port"),
        ("BACCARAT_BROKER__PORT", "0x22b3", "broker.port"),
        ("BACCARAT_BROKER__PORT", " 8883", "broker.port"),
        ("BACCARAT_JOURNAL__RETENTION", "1e3", "journal.retention"),
        ("BACCARAT_EDGE__ADVANTAGE", "two percent", "edge.advantage"),
        ("BACCARAT_BROKER", '{"port": "8883"}', "broker.port"),
    ],
)
def test_any_other_environment_value_is_an_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, key: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as raised:
        load_config(table_toml(tmp_path))
    text = str(raised.value)
    assert text.startswith("environment: 1 problem(s)\n"), text
    assert f"  {key} (from ${variable}): Input should be a valid" in text
    assert "table.toml" not in text  # the file is fine


def test_baccarat_run_exits_2_naming_the_key_and_the_file(tmp_path: Path) -> None:
    path = table_toml(tmp_path, journal='fsync = "yes"')
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACCARAT_")}
    proc = subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "run", "--config", str(path)],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert f"{path}: 1 problem(s)\n  journal.fsync: Input should be a valid boolean" in (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr
