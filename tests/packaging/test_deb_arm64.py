"""The arm64 package, for the usual table computers (Raspberry Pi 4/5 and other Cortex-A boards).

Built on this machine by ``packaging/build-deb --arch arm64`` from the same release wheel
as the machine's own package, it must be that package but for its compiled wheels: the same
files, scripts, conffiles and Baccarat-Identity, and every compiled file in it aarch64 code.

Then it is installed as on a board, under qemu-user: ``packaging/arm64-root`` lays out
Debian 12's own arm64 python3 in an empty folder, the package is extracted beside it with
``dpkg -x`` and its postinst makes the virtualenv with that aarch64 Python
(``BACCARAT_PYTHON``, ``BACCARAT_INSTALL_ROOT``), the kernel handing every aarch64 program
to qemu-aarch64 through binfmt_misc, with ``QEMU_LD_PREFIX`` pointing at the root for the
loader and libraries. The installed ``baccarat`` must report its version, verify its
identity and replay a whole shoe to the same bytes as this machine's engine. About a
minute and a half on the 2-core VM; where the kernel has no binfmt_misc entry for aarch64
(a container that may not register one, no qemu-user-static) the emulated tests skip and
say so, and the package's own checks still run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.rules.profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
NAME = "baccarat-controller"
VENV = Path("opt/baccarat-controller/venv")
BINFMT = Path("/proc/sys/fs/binfmt_misc/qemu-aarch64")
EM_AARCH64 = 183
"""ELF e_machine of aarch64 code (x86_64 is 62)."""
COMPILED_WHEEL = re.compile(r"-cp3\d+-(?:cp3\d+|abi3)-(\S+)\.whl$")  # abi3: cryptography

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("deb_arm64"),  # module fixtures: one worker
    # the first test to run may wait for the wheel and both packages to be built (conftest.py)
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        shutil.which("dpkg-deb") is None, reason="needs dpkg-deb (scripts/setup --system)"
    ),
]


def run(*args: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    """Run a command to its end (never longer than 5 minutes); it must succeed."""
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=300, check=False,
        **options,  # type: ignore[call-overload]
    )  # fmt: skip
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done


def no_emulation() -> str | None:
    """Why aarch64 programs cannot run here, or None if they can."""
    if not BINFMT.exists():
        return (
            f"no {BINFMT}: the kernel runs no aarch64 program here (scripts/setup --system "
            "installs qemu-user-static and binfmt-support and registers them; a container "
            "may not be allowed to)"
        )
    if BINFMT.read_text().splitlines()[0] != "enabled":
        return f"{BINFMT} is disabled (update-binfmts --enable qemu-aarch64)"
    if shutil.which("apt-get") is None:
        return "no apt-get to fetch Debian's arm64 python3"
    return None


emulated = pytest.mark.skipif(no_emulation() is not None, reason=str(no_emulation()))


@pytest.fixture(scope="module")
def deb(build_deb: Callable[[str], Path]) -> Path:
    return build_deb("arm64")


@pytest.fixture(scope="module")
def deb_amd64(build_deb: Callable[[str], Path]) -> Path:
    return build_deb("amd64")


def fields(deb: Path) -> dict[str, str]:
    text = run("dpkg-deb", "-f", deb).stdout
    return {m[1]: m[2].strip() for m in re.finditer(r"^(\S+): ((?:.*\n)(?: .*\n)*)", text, re.M)}


def paths(deb: Path) -> set[str]:
    listing = run("dpkg-deb", "-c", deb).stdout.splitlines()
    return {line.split()[5].removeprefix("./") for line in listing}


def test_control_data(deb: Path, deb_amd64: Path) -> None:
    got, amd64 = fields(deb), fields(deb_amd64)
    assert got["Architecture"] == "arm64"
    assert deb.name == f"{NAME}_{VERSION}_arm64.deb"
    for same in ("Package", "Version", "Depends", "Recommends", "Description"):
        assert got[same] == amd64[same], same
    # one identity for both: it is the release's Python files, not the CPU's wheels
    assert got["Baccarat-Identity"] == amd64["Baccarat-Identity"]


def test_the_same_files_but_the_compiled_wheels(deb: Path, deb_amd64: Path) -> None:
    arm64 = {COMPILED_WHEEL.sub("-CPU.whl", p) for p in paths(deb)}
    amd64 = {COMPILED_WHEEL.sub("-CPU.whl", p) for p in paths(deb_amd64)}
    assert arm64 == amd64
    compiled = sorted(p for p in paths(deb) if COMPILED_WHEEL.search(p))
    assert [Path(p).name.split("-")[0] for p in compiled] == [
        "cffi", "cryptography", "psycopg_binary", "pydantic_core",
    ]


def test_the_same_scripts(deb: Path, deb_amd64: Path, tmp_path: Path) -> None:
    for package in (deb, deb_amd64):
        run("dpkg-deb", "-e", package, tmp_path / package.name)
    for name in ("postinst", "prerm", "postrm", "conffiles"):
        arm64 = (tmp_path / deb.name / name).read_bytes()
        assert arm64 == (tmp_path / deb_amd64.name / name).read_bytes(), name


def test_every_compiled_file_is_aarch64(deb: Path, tmp_path: Path) -> None:
    run("dpkg-deb", "-x", deb, tmp_path)
    wheels = sorted((tmp_path / "opt/baccarat-controller/wheels").glob("*.whl"))
    assert not [w.name for w in wheels if "x86_64" in w.name]
    shared = 0
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                head = archive.open(name).read(20)
                if head[:4] != b"\x7fELF":
                    assert not name.endswith(".so"), f"{wheel.name}: {name} is not ELF"
                    continue
                machine = int.from_bytes(head[18:20], "little")
                assert machine == EM_AARCH64, f"{wheel.name}: {name} is for e_machine {machine}"
                shared += 1
    assert shared >= 2  # pydantic-core's and psycopg-binary's at least


# ---- installed and run under qemu-user ----------------------------------------------------


@pytest.fixture(scope="module")
def root(deb: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Debian 12's arm64 python3 with the package extracted and its postinst run."""
    why = no_emulation()
    if why is not None:
        pytest.skip(why)
    folder = Path(run(ROOT / "packaging" / "arm64-root", tmp_path_factory.mktemp("arm64"))
                  .stdout.splitlines()[-1])  # fmt: skip
    run("dpkg", "-x", deb, folder)
    control = tmp_path_factory.mktemp("control") / "DEBIAN"
    run("dpkg-deb", "-e", deb, control)
    env = {
        **os.environ,
        "BACCARAT_INSTALL_ROOT": str(folder),
        "BACCARAT_PYTHON": str(folder / "usr/bin/python3"),
        "QEMU_LD_PREFIX": str(folder),
    }
    run(control / "postinst", "configure", env=env)
    return folder


def on_arm64(root: Path, program: str, *args: str | Path) -> str:
    """Run a program of the root's venv (aarch64, under qemu-user); its output."""
    env = {**os.environ, "QEMU_LD_PREFIX": str(root)}
    return run(root / VENV / "bin" / program, *args, env=env).stdout


@emulated
def test_the_venv_runs_debian_arm64_python(root: Path) -> None:
    code = "import platform, sys; print(platform.machine(), sys.version_info[:2])"
    got = on_arm64(root, "python", "-c", code)
    assert got == "aarch64 (3, 11)\n"
    link = os.readlink(root / "usr/bin/baccarat")
    assert link == f"/{VENV}/bin/baccarat"


@emulated
def test_the_installed_command_reports_and_verifies(root: Path, deb: Path) -> None:
    assert on_arm64(root, "baccarat", "--version") == f"{NAME} {VERSION}\n"
    body = json.loads(on_arm64(root, "baccarat", "identity", "--json"))
    assert body["verified"] is True
    assert f"sha256:{body['sha256']}" == fields(deb)["Baccarat-Identity"]
    assert Path(body["package"]).is_relative_to(root / VENV)


@emulated
def test_a_shoe_replays_to_the_same_bytes_as_here(root: Path, tmp_path: Path) -> None:
    """Invariant 1 across CPUs: a whole 8-deck shoe, roads included."""
    profile = load_profile("macau")
    engine, lines = Engine(profile), []
    for inp in shoe_inputs(8, 7):
        lines.append(inp.to_text())
        engine.feed(inp)
        if engine.shoe is not None and engine.shoe.phase == "closed":
            break
    shoe = tmp_path / "shoe.txt"
    shoe.write_text("\n".join(lines) + "\n")
    here = run(sys.executable, "-m", "baccarat.cli", "replay", shoe).stdout
    assert here.count('"type":"result"') > 60
    assert on_arm64(root, "baccarat", "replay", shoe) == here
