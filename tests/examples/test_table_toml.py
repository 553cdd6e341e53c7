"""examples/table.toml loads with the daemon's own loader, so it cannot drift from config.py."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from baccarat.controller.config import Config, ConfigError, load_config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "table.toml"
OPTIONAL = re.compile(r"^#(\w+ = .*)$", re.MULTILINE)  # `#name = value`: an optional setting
ETC = "/etc/baccarat-controller/"


@pytest.fixture(autouse=True)
def no_baccarat_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the file counts: drop any BACCARAT_* variable of the environment."""
    for name in list(os.environ):
        if name.startswith("BACCARAT_"):
            monkeypatch.delenv(name)


def with_optional_lines(tmp_path: Path) -> Path:
    """The example with every `#name = value` line enabled and /etc files made in tmp_path."""
    text = OPTIONAL.sub(r"\1", EXAMPLE.read_text())
    for name in re.findall(re.escape(ETC) + r"([\w.-]+)", text):
        (tmp_path / name).write_text("secret\n")
    path = tmp_path / "table.toml"
    path.write_text(text.replace(ETC, f"{tmp_path}/"))
    return path


def test_example_loads_as_it_is() -> None:
    config = load_config(EXAMPLE)
    assert config.table == "T07"
    assert config.device.kind == "serial"
    assert config.broker.username == "baccarat-T07"
    assert config.journal.folder == Path("/var/lib/baccarat-controller")
    assert config.journal.fsync is True


def test_example_loads_with_every_optional_line(tmp_path: Path) -> None:
    config = load_config(with_optional_lines(tmp_path))
    assert config.rule_profile().decks == 8
    assert config.rules == {
        "decks": 8, "after_cut": "one_more_if_tie", "open_mode": "auto", "burn_press": "auto"
    }
    assert (config.device.usb_vendor, config.device.usb_product) == (0x1209, 0x0001)
    assert config.broker.resolved_password() == "secret"
    assert config.broker.ca_file == tmp_path / "ca.crt"
    assert config.broker.client_id == "baccarat-T07"


def test_the_unit_password_credential_works_with_the_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As under systemd: the file as it is, the password file named by the environment."""
    credential = tmp_path / "broker-password"
    credential.write_text("from-systemd\n")
    monkeypatch.setenv("BACCARAT_BROKER__PASSWORD_FILE", str(credential))
    assert load_config(EXAMPLE).broker.resolved_password() == "from-systemd"


def test_the_environment_overrides_the_example(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACCARAT_TABLE", "T12")
    monkeypatch.setenv("BACCARAT_BROKER__HOST", "10.20.0.5")
    config = load_config(EXAMPLE)
    assert (config.table, config.broker.host) == ("T12", "10.20.0.5")


def test_example_documents_every_setting() -> None:
    """Each field of Config and of its sections appears as `name = ...`, set or commented."""
    written = set(re.findall(r"^#? ?(\w+) = ", EXAMPLE.read_text(), re.MULTILINE))
    fields = set(Config.model_fields)
    for name, field in Config.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            fields.discard(name)
            fields |= set(field.annotation.model_fields)
    fields.discard("rules")  # a [rules] table, not a `rules = ` line
    assert "[rules]" in EXAMPLE.read_text()
    assert fields - written == set()


def test_a_misspelt_setting_is_refused(tmp_path: Path) -> None:
    """The check above has teeth: the loader names an unknown field."""
    path = tmp_path / "table.toml"
    path.write_text(EXAMPLE.read_text().replace("keepalive =", "keep_alive ="))
    with pytest.raises(ConfigError, match="keep_alive"):
        load_config(path)
