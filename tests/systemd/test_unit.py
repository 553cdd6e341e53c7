"""The systemd unit and sysusers file, checked by systemd's own tools."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from baccarat.controller.faults import FAULT_EXIT
from baccarat.controller.serving import FAULT_REPORT_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "baccarat-controller.service"
SYSUSERS = ROOT / "systemd" / "baccarat-controller.sysusers.conf"
# 2.0 on systemd-analyze's 0-10 scale (its --threshold counts tenths); the unit scores 1.7.
EXPOSURE_THRESHOLD = 20

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(
    ANALYZE is None,
    reason="systemd-analyze is not installed (Debian package 'systemd'; scripts/setup --system "
    "installs it): the unit cannot be verified without it",
)


def unit_text() -> str:
    """The unit with ExecStart= pointing at an executable that exists on this machine.

    systemd-analyze verify rejects a unit whose ExecStart binary is missing, and
    /usr/bin/baccarat exists only where the package is installed system-wide.
    """
    text = UNIT.read_text()
    assert text.count("\nExecStart=/usr/bin/baccarat ") == 1
    python = f"\nExecStart={sys.executable} -m baccarat.cli "
    return text.replace("\nExecStart=/usr/bin/baccarat ", python)


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    """Run systemd-analyze; it is quick, but never hang the suite on it."""
    assert ANALYZE is not None
    return subprocess.run([ANALYZE, *args], capture_output=True, text=True, timeout=60, check=False)


@needs_analyze
def test_unit_verifies_without_warnings(tmp_path: Path) -> None:
    unit = tmp_path / UNIT.name
    unit.write_text(unit_text())
    done = analyze("verify", str(unit))
    # verify exits 0 even for unknown keys or bad values: it only warns, naming the file.
    about_us = [line for line in done.stderr.splitlines() if UNIT.name in line]
    assert done.returncode == 0, done.stderr
    assert about_us == []


@needs_analyze
def test_verify_would_catch_a_typo(tmp_path: Path) -> None:
    """The check above has teeth: a misspelt directive is reported."""
    unit = tmp_path / UNIT.name
    unit.write_text(unit_text().replace("\nDevicePolicy=", "\nDevicPolicy="))
    done = analyze("verify", str(unit))
    assert "Unknown key 'DevicPolicy'" in done.stderr


@needs_analyze
def test_exposure_stays_low() -> None:
    offline = analyze("security", "--help")
    if "--offline" not in offline.stdout:
        pytest.skip("this systemd-analyze has no --offline (systemd < 250)")
    done = analyze(
        "security", "--offline=yes", f"--threshold={EXPOSURE_THRESHOLD}", "--no-pager", str(UNIT)
    )
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout)
    assert found, done.stdout + done.stderr
    assert done.returncode == 0, f"exposure {found.group(1)} is above {EXPOSURE_THRESHOLD / 10}"
    assert f"overall exposure {found.group(1)} " in UNIT.read_text(), (
        f"update the exposure recorded at the top of the unit to {found.group(1)}"
    )


def test_unit_keeps_what_the_daemon_relies_on() -> None:
    settings: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    assert settings["Type"] == ["notify"]
    assert settings["NotifyAccess"] == ["main"]
    assert settings["StateDirectory"] == ["baccarat-controller"]
    assert "PrivateDevices" not in settings  # it would hide /dev/ttyUSB*
    assert "AF_NETLINK" in settings["RestrictAddressFamilies"][0]  # libusb_init needs it
    assert settings["Environment"] == ["BACCARAT_BROKER__PASSWORD_FILE=%d/broker-password"]
    assert settings["LoadCredential"][0].startswith("broker-password:")


@pytest.mark.skipif(
    shutil.which("systemd-sysusers") is None,
    reason="systemd-sysusers is not installed (Debian package 'systemd')",
)
def test_sysusers_creates_the_account_in_dialout(tmp_path: Path) -> None:
    conf = tmp_path / "usr" / "lib" / "sysusers.d" / "baccarat-controller.conf"
    conf.parent.mkdir(parents=True)
    shutil.copy(SYSUSERS, conf)
    (tmp_path / "etc").mkdir()
    done = subprocess.run(
        ["systemd-sysusers", f"--root={tmp_path}", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Creating user 'baccarat'" in done.stdout + done.stderr
    if os.geteuid() != 0:
        return  # writing the files needs root's locks; the dry run checked the syntax
    subprocess.run(["systemd-sysusers", f"--root={tmp_path}"], check=True, timeout=60)
    passwd = (tmp_path / "etc" / "passwd").read_text()
    groups = {
        line.split(":")[0]: line.split(":")[3].split(",")
        for line in (tmp_path / "etc" / "group").read_text().splitlines()
    }
    assert re.search(r"^baccarat:x:\d+:\d+:[^:]*:/var/lib/baccarat-controller:", passwd, re.M)
    assert "baccarat" in groups["dialout"]
    assert "baccarat" in groups["plugdev"]


def unit_settings() -> dict[tuple[str, str], list[str]]:
    """The unit's settings by (section, key), each with its values in order."""
    settings: dict[tuple[str, str], list[str]] = {}
    section = ""
    for line in UNIT.read_text().splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            settings.setdefault((section, key), []).append(value)
    return settings


def test_a_fault_that_a_restart_cannot_fix_does_not_loop() -> None:
    settings = unit_settings()
    prevented = settings[("Service", "RestartPreventExitStatus")][0].split()
    assert str(FAULT_EXIT) in prevented  # a journal fault: full, read-only, locked
    assert "2" in prevented  # a bad configuration (baccarat run's exit status 2)


def test_a_crash_loop_hits_the_start_limit() -> None:
    """A burst of failing starts falls inside the start-limit interval.

    Each takes RestartSec plus the start itself (a few seconds; the daemon's own fault
    report waits at most FAULT_REPORT_TIMEOUT). Else the loop never stops: systemd's
    default, 5 starts in 10 s, is shorter than 5 restarts 2 s apart.
    """
    settings = unit_settings()
    interval = int(settings[("Unit", "StartLimitIntervalSec")][0])
    burst = int(settings[("Unit", "StartLimitBurst")][0])
    restart_sec = float(settings[("Service", "RestartSec")][0])
    assert burst * (restart_sec + FAULT_REPORT_TIMEOUT + 5) < interval
    assert settings[("Service", "Restart")] == ["on-failure"]
