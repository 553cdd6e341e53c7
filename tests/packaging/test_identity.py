"""``baccarat --version`` and ``baccarat identity`` on a real release build.

The release wheel is built by ``packaging/build-wheel`` (the manifest inside it, see
conftest.py), installed for real, then changed on disk the way a technician or an intruder
might: the identity command must name every file that differs. Each run is a process of its
own, started with ``python -S`` and only the installed copy on its path, so the development
checkout (an editable install with no manifest) cannot stand in for it.
tests/cli/test_identity.py has the tests that need no build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from baccarat.identity import MANIFEST_NAME, read_manifest

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("identity"),  # module fixtures: one worker
]
MODULE = "rules/tableau.py"  # any module of the package will do


@pytest.fixture(scope="module")
def pristine(release_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release wheel installed into a folder (``pip install --target``), once."""
    site = tmp_path_factory.mktemp("pristine")
    pip("install", "--no-deps", "--no-index", "--target", str(site), str(release_wheel))
    return site


@pytest.fixture
def site(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the installed release that a test may change."""
    copy = tmp_path / "site"
    shutil.copytree(pristine, copy)
    return copy


def pip(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def identity(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``baccarat identity ARGS`` run from the installed copy in ``site`` only."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-S", "-m", "baccarat.cli", "identity", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_fresh_install_verifies_with_the_console_script(
    release_wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=60)
    pip("--python", str(venv / "bin" / "python"), "install", "--no-deps", "--no-index",
        str(release_wheel))  # fmt: skip
    baccarat = str(venv / "bin" / "baccarat")

    version = subprocess.run([baccarat, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout == f"baccarat-controller {VERSION}\n"

    done = subprocess.run([baccarat, "identity"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    package = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    manifest = package / "site-packages" / "baccarat" / MANIFEST_NAME
    assert done.stdout.splitlines()[:2] == [
        f"baccarat-controller {VERSION}",
        f"sha256 {sha256(manifest)}",
    ]
    assert f"verified: every file matches {manifest}" in done.stdout


def test_the_json_form_and_the_coreutils_recipe_agree(site: Path) -> None:
    done = identity(site, "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["name"] == "baccarat-controller"
    assert body["version"] == VERSION
    assert body["verified"] is True
    assert (body["changed"], body["missing"], body["extra"]) == ([], [], [])
    assert body["sha256"] == sha256(site / "baccarat" / MANIFEST_NAME)
    assert body["files"] == len(read_manifest(site / "baccarat" / MANIFEST_NAME))
    # The recipe of baccarat/identity.py's docstring: an inspector needs only coreutils.
    recipe = (
        "find . -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path ./MANIFEST.sha256 "
        "-printf '%P\\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum"
    )
    shell = subprocess.run(
        ["sh", "-c", recipe], cwd=site / "baccarat", capture_output=True, text=True, check=True
    )
    assert shell.stdout.split()[0] == body["sha256"]


def test_a_changed_byte_in_one_module_is_named(site: Path) -> None:
    before = json.loads(identity(site, "--json").stdout)["sha256"]
    module = site / "baccarat" / MODULE
    data = bytearray(module.read_bytes())
    data[len(data) // 2] ^= 0x01
    module.write_bytes(bytes(data))

    done = identity(site)
    assert done.returncode == 1
    manifest = site / "baccarat" / MANIFEST_NAME
    assert f"NOT VERIFIED: the files differ from {manifest}" in done.stdout
    assert [line for line in done.stdout.splitlines() if line.startswith("  changed")] == [
        f"  changed: {MODULE}"
    ]
    assert "missing:" not in done.stdout
    assert "extra:" not in done.stdout
    after = json.loads(identity(site, "--json").stdout)
    assert after["changed"] == [MODULE]
    assert after["verified"] is False
    assert after["sha256"] != before


def test_an_added_file_and_a_removed_one_are_named(site: Path) -> None:
    (site / "baccarat" / "rules" / "house_edge_patch.py").write_text("EDGE = 0\n")
    (site / "baccarat" / "cards.py").unlink()
    done = identity(site, "--json")
    assert done.returncode == 1
    body = json.loads(done.stdout)
    assert body["extra"] == ["rules/house_edge_patch.py"]
    assert body["missing"] == ["cards.py"]
    assert body["changed"] == []


def test_compiled_files_are_outside_the_identity(site: Path) -> None:
    """Python writes .pyc files on the table as it pleases: they change nothing here."""
    cache = site / "baccarat" / "rules" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "tableau.cpython-311.pyc").write_bytes(b"\x00" * 16)
    (site / "baccarat" / "stray.pyc").write_bytes(b"\x00" * 16)
    assert identity(site).returncode == 0


def test_no_manifest_says_so_and_exits_2(site: Path) -> None:
    (site / "baccarat" / MANIFEST_NAME).unlink()
    done = identity(site)
    assert done.returncode == 2
    assert "NO MANIFEST: this is a development checkout" in done.stdout
    assert "nothing verified" in done.stdout
    assert json.loads(identity(site, "--json").stdout)["verified"] is None


def test_a_damaged_manifest_is_reported_not_a_traceback(site: Path) -> None:
    manifest = site / "baccarat" / MANIFEST_NAME
    lines = manifest.read_text().splitlines(keepends=True)
    lines[2] = "not a digest\n"
    manifest.write_text("".join(lines))
    done = identity(site)
    assert done.returncode == 1
    assert done.stderr == (
        f"baccarat identity: {manifest}:3: not '<64 hex digits>  <path>': 'not a digest'\n"
    )
