"""The release wheel, built once for every test of the packaging (it takes a while)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def release_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``packaging/build-wheel`` makes, with its manifest."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [str(ROOT / "packaging" / "build-wheel"), str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.splitlines()[-1])
