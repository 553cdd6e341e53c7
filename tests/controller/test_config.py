"""The daemon's configuration: what the journal section still accepts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baccarat.controller.config import ConfigError, load_config
from baccarat.errors import BaccaratError


@pytest.fixture(autouse=True)
def no_baccarat_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the file counts: drop any BACCARAT_* variable of the environment."""
    for name in list(os.environ):
        if name.startswith("BACCARAT_"):
            monkeypatch.delenv(name)


def table_toml(tmp_path: Path, journal: str) -> Path:
    path = tmp_path / "table.toml"
    path.write_text(f'table = "T1"\n[journal]\nfolder = "{tmp_path}/j"\n{journal}\n')
    return path


def test_the_obsolete_overlap_setting_is_accepted_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config(table_toml(tmp_path, 'sync = "overlap"'))
    assert config.journal.fsync
    assert 'journal.sync = "overlap" is no longer used' in caplog.text


def test_inline_is_accepted_silently(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    load_config(table_toml(tmp_path, 'sync = "inline"'))
    assert "journal.sync" not in caplog.text


def test_another_sync_value_is_a_config_error_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"journal\.sync") as raised:
        load_config(table_toml(tmp_path, 'sync = "uring"'))
    assert isinstance(raised.value, BaccaratError)
