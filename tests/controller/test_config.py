"""The daemon's configuration: what the journal section still accepts."""

from __future__ import annotations

import os
import subprocess
import sys
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


# ---------------------------------------------------------------- as `baccarat run` reports it


def baccarat_run(config: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    """``baccarat run --config FILE`` as a process, with only these BACCARAT_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BACCARAT_")}
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "run", "--config", str(config)],
        env=env | environment, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_a_bad_environment_value_is_blamed_on_its_variable(tmp_path: Path) -> None:
    proc = baccarat_run(table_toml(tmp_path, ""), BACCARAT_BROKER__PORT="eighteen")
    assert proc.returncode == 2
    assert "environment: 1 problem(s)" in proc.stderr
    assert "broker.port (from $BACCARAT_BROKER__PORT): Input should be a valid integer" in (
        proc.stderr
    )
    assert "table.toml" not in proc.stderr  # the file is fine


def test_the_file_is_blamed_for_its_values_and_a_variable_for_its_own(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('table = "T 1"\n')
    proc = baccarat_run(path, BACCARAT_PROFILE="house7")
    assert proc.returncode == 2
    assert f"{path}: 1 problem(s)\n  table: String should match pattern" in proc.stderr
    assert "house7" not in proc.stderr  # the profile is checked once the fields are valid
    proc = baccarat_run(table_toml(tmp_path, ""), BACCARAT_PROFILE="house7")
    assert "profile (from $BACCARAT_PROFILE): unknown profile 'house7'" in proc.stderr


def test_a_deck_count_from_the_environment_is_blamed_on_it(tmp_path: Path) -> None:
    proc = baccarat_run(table_toml(tmp_path, ""), BACCARAT_RULES__DECKS="2")
    assert proc.returncode == 2
    assert "rules.decks (from $BACCARAT_RULES__DECKS): a real table uses 6 to 12 decks" in (
        proc.stderr
    )


def test_a_section_variable_is_blamed_only_for_what_it_sets(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('table = "T1"\n[broker]\nport = "eighteen"\n')
    proc = baccarat_run(path, BACCARAT_BROKER='{"host": "10.0.0.5"}')
    assert f"{path}: 1 problem(s)\n  broker.port: Input should be a valid integer" in proc.stderr
    proc = baccarat_run(path, BACCARAT_BROKER='{"port": "nineteen"}')
    assert "broker.port (from $BACCARAT_BROKER): Input should be a valid integer" in proc.stderr


def test_a_section_variable_that_is_not_json_is_named(tmp_path: Path) -> None:
    proc = baccarat_run(table_toml(tmp_path, ""), BACCARAT_BROKER="{port: 1883")
    assert proc.returncode == 2
    assert 'environment: error parsing value for field "broker"' in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_profile_name_in_rules_exits_2_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text(f'table = "T1"\n[rules]\nname = "house"\n[journal]\nfolder = "{tmp_path}/j"\n')
    proc = baccarat_run(path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{path}: 1 problem(s)\n  rules.name: the profile's name is chosen with profile" in (
        proc.stderr
    )


def test_a_missing_profile_file_exits_2_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text(f'table = "T1"\nprofile = "{tmp_path}/absent.toml"\n')
    proc = baccarat_run(path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "profile: cannot read the profile" in proc.stderr


def test_a_bad_rules_override_is_named_under_rules(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('table = "T1"\n[rules]\nopen_mode = "sometimes"\n')
    with pytest.raises(ConfigError, match=r"rules\.open_mode: Input should be"):
        load_config(path)


def test_the_protocol_is_a_registered_codec(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('table = "T1"\n[device]\npath = "/dev/ttyUSB0"\nprotocol = "morse"\n')
    with pytest.raises(ConfigError, match=r"device\.protocol: .*unknown protocol 'morse'"):
        load_config(path)


def edge_toml(tmp_path: Path, edge: str, profile: str = "macau") -> Path:
    path = tmp_path / "table.toml"
    path.write_text(f'table = "T1"\nprofile = "{profile}"\n[edge]\n{edge}\n')
    return path


def test_the_edge_watches_tie_and_pairs_at_two_percent_unless_told(tmp_path: Path) -> None:
    assert load_config(edge_toml(tmp_path, "")).edge.thresholds() == {
        "tie": 0.02, "player_pair": 0.02, "banker_pair": 0.02,
    }
    config = load_config(edge_toml(tmp_path, "advantage = 0.05\ntie = 0.02\nbanker = 0.001"))
    assert config.edge.thresholds() == {
        "banker": 0.001, "tie": 0.02, "player_pair": 0.05, "banker_pair": 0.05,
    }
    assert load_config(edge_toml(tmp_path, "enabled = false")).edge.thresholds() == {}


@pytest.mark.parametrize(("edge", "why"), [
    ("advantage = -0.2", r"edge\.advantage: -0\.2 for tie: a player edge above the full "
                         r"shoe's -0\.1436 \(else it stands from the first card\)"),
    ("tie = 8.5", r"edge\.tie: 8\.5 for tie: .* at most the payout 8\.0"),
    ("banker = -0.05", r"edge\.banker: -0\.05 for banker: a player edge above the full "
                       r"shoe's -0\.0106"),
    ("player_pair = nan", r"edge\.player_pair: Input should be a finite number"),
    ('player_pair = "nan"', r"edge\.player_pair: Input should be a valid number, not the "
                            r"string 'nan'"),
    ("tie = inf", r"edge\.tie: Input should be a finite number"),
    ('advantage = "high"', r"edge\.advantage: Input should be a valid number"),
    ("threshold = 0.1", r"edge\.threshold: Extra inputs are not permitted"),
])
def test_a_bad_threshold_is_named_with_what_it_may_be(
    tmp_path: Path, edge: str, why: str
) -> None:
    with pytest.raises(ConfigError, match=why):
        load_config(edge_toml(tmp_path, edge))


def test_a_bad_threshold_stops_the_daemon_with_status_2(tmp_path: Path) -> None:
    path = edge_toml(tmp_path, "advantage = -1")
    run = subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "run", "--config", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert run.returncode == 2
    assert "edge.advantage: -1.0 for tie" in run.stderr
