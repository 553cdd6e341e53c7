"""``baccarat --version`` and ``baccarat identity`` in this checkout, and the manifest code.

The same commands on a real release build, changed files and all, are in
tests/packaging/test_identity.py.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import pytest

from baccarat.cli import main
from baccarat.identity import (
    MANIFEST_NAME,
    IdentityError,
    identity_digest,
    manifest_text,
    read_manifest,
    verify,
    write_manifest,
)

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_version_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"baccarat-controller {VERSION}\n"


def test_a_development_checkout_has_no_manifest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    if (ROOT / "src" / "baccarat" / MANIFEST_NAME).exists():
        pytest.skip("this checkout holds a manifest (written by hand?)")
    assert main(["identity"]) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"baccarat-controller {VERSION}\nsha256 ")
    assert "NO MANIFEST" in out


def test_write_manifest_then_verify(tmp_path: Path) -> None:
    package = tmp_path / "baccarat"
    (package / "rules" / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rules" / "b.py").write_text("B = 1\n")
    (package / "rules" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"x")
    (package / "web.js").write_text("//\n")
    path, digest = write_manifest(package)
    text = path.read_text()
    assert [line.split("  ")[1] for line in text.splitlines()] == [
        "__init__.py",
        "rules/b.py",
        "web.js",
    ]
    assert digest == identity_digest(text) == sha256(path)
    assert verify(package).verified is True
    (package / "web.js").write_text("//!\n")
    assert verify(package).changed == ("web.js",)


def test_a_file_name_a_manifest_cannot_hold_is_refused() -> None:
    with pytest.raises(IdentityError, match="cannot be written in a manifest"):
        manifest_text({"a\nb.py": "0" * 64})


def test_a_manifest_listing_a_file_twice_is_refused(tmp_path: Path) -> None:
    manifest = tmp_path / MANIFEST_NAME
    manifest.write_text(f"{'a' * 64}  x.py\n{'b' * 64}  x.py\n")
    with pytest.raises(IdentityError, match=r":2: x.py is listed twice"):
        read_manifest(manifest)
