"""The release wheel and the Debian packages, each built once per test run (they take a while).

Under pytest-xdist every worker has its own session, so a session fixture alone would
build the wheel once per worker: the builds are made in the run's shared temporary folder
instead, under a lock, by whichever worker asks first; the others wait and take the result.
Each build has its own explicit timeout (``BUILD_TIMEOUT``); the modules whose tests use
them carry ``pytest.mark.timeout(900)``, which covers waiting for the builds another worker
runs (issue 21: one build alone ran past the default 120 s on a loaded 2-core machine).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 300
"""Seconds for one build (the wheel, or one package): 15-25 s alone on the 2-core VM."""


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every worker of this run sees (the session's own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]
) -> Path:
    """``build(folder)``'s result, made once per run in the shared folder ``name``."""
    folder = shared_folder(tmp_path_factory) / name
    folder.mkdir(exist_ok=True)
    with (folder.parent / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / "built"
        if not done.exists():
            done.write_text(str(build(folder)))
        return Path(done.read_text())


def last_line_of(*args: str | Path) -> Path:
    """Run a build script; the path it prints last."""
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=BUILD_TIMEOUT,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{args}: {done.stderr[-3000:]}"
    return Path(done.stdout.splitlines()[-1])


@pytest.fixture(scope="session")
def release_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``packaging/build-wheel`` makes, with its manifest."""
    return built_once(
        tmp_path_factory, "wheel",
        lambda out: last_line_of(ROOT / "packaging" / "build-wheel", out),
    )  # fmt: skip


@pytest.fixture(scope="session")
def build_deb(
    release_wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Path]:
    """``build_deb(arch)``: the package of the release wheel for ``arch``, built once per run."""

    def build(arch: str) -> Path:
        return built_once(
            tmp_path_factory, f"deb-{arch}",
            lambda out: last_line_of(
                ROOT / "packaging" / "build-deb", "--arch", arch, "--wheel", release_wheel, out
            ),
        )  # fmt: skip

    return build
