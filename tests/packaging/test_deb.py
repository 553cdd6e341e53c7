"""The Debian package: built by ``packaging/build-deb``, checked, installed into a clean root.

The test run must not change the machine it runs on (accounts, /opt, systemd's units), so
the package is not installed with ``dpkg -i``: it is extracted with ``dpkg -x`` into an
empty folder and its own postinst is run there with ``BACCARAT_INSTALL_ROOT`` (the
virtualenv from the shipped wheels, offline, and the accounts by ``systemd-sysusers
--root``). From that root the installed ``baccarat`` must report its version and verify
its identity, ``systemd-analyze verify --root`` must accept the installed units, and apt
must find the package installable here (``apt-get install --simulate``). The kiosk unit's
command line runs under cage's headless backend: no test here has a screen.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
NAME = "baccarat-controller"
VENV = Path("opt/baccarat-controller/venv")
UNITS = ("baccarat-controller.service", "baccarat-board-kiosk.service")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("deb"),  # module fixtures: one worker
    # the first test to run may wait for the wheel and the package to be built (conftest.py)
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        shutil.which("dpkg-deb") is None or shutil.which("systemd-analyze") is None,
        reason="needs dpkg-deb and systemd-analyze (Debian; scripts/setup --system)",
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


@pytest.fixture(scope="module")
def deb(build_deb: Callable[[str], Path]) -> Path:
    """The package of the run's release wheel for this machine, built once per run."""
    return build_deb(run("dpkg", "--print-architecture").stdout.strip())


@pytest.fixture(scope="module")
def control(deb: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's control files (``dpkg-deb -e``)."""
    folder = tmp_path_factory.mktemp("control") / "DEBIAN"
    run("dpkg-deb", "-e", deb, folder)
    return folder


@pytest.fixture(scope="module")
def root(deb: Path, control: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean root with the package extracted and its postinst run against it."""
    folder = tmp_path_factory.mktemp("root")
    run("dpkg", "-x", deb, folder)
    env = {**os.environ, "BACCARAT_INSTALL_ROOT": str(folder)}
    run(control / "postinst", "configure", env=env)
    return folder


def fields(deb: Path) -> dict[str, str]:
    text = run("dpkg-deb", "-f", deb).stdout
    return {m[1]: m[2].strip() for m in re.finditer(r"^(\S+): ((?:.*\n)(?: .*\n)*)", text, re.M)}


def installed_baccarat(root: Path) -> Path:
    """/usr/bin/baccarat of the root, followed into the root (it is an absolute link)."""
    link = os.readlink(root / "usr/bin/baccarat")
    assert link == f"/{VENV}/bin/baccarat"
    return root / link.lstrip("/")


def test_control_data(deb: Path) -> None:
    got = fields(deb)
    assert got["Package"] == NAME
    assert got["Version"] == VERSION
    # pydantic-core is compiled: the package is for this CPU and this Python 3.X only.
    arch = run("dpkg", "--print-architecture").stdout.strip()
    assert got["Architecture"] == arch
    assert deb.name == f"{NAME}_{VERSION}_{arch}.deb"
    minor = sys.version_info.minor
    assert got["Depends"] == f"python3 (>= 3.{minor}), python3 (<< 3.{minor + 1}), systemd"
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", got["Baccarat-Identity"])


def test_file_list(deb: Path, control: Path) -> None:
    listing = run("dpkg-deb", "-c", deb).stdout.splitlines()
    paths = {line.split()[5].removeprefix("./") for line in listing}
    for path in (
        "usr/lib/systemd/system/baccarat-controller.service",
        "usr/lib/systemd/system/baccarat-board-kiosk.service",
        "usr/lib/sysusers.d/baccarat-controller.conf",
        "usr/lib/sysusers.d/baccarat-board-kiosk.conf",
        "etc/baccarat-controller/table.toml",
        "etc/baccarat-controller/board-kiosk.env",
        "usr/share/doc/baccarat-controller/copyright",
        "usr/share/doc/baccarat-controller/README.md",
        "usr/share/doc/baccarat-controller/docs/operators.md",
        "usr/share/doc/baccarat-controller/examples/udev/99-baccarat-shoe.rules",
        f"opt/baccarat-controller/wheels/baccarat_controller-{VERSION}-py3-none-any.whl",
    ):
        assert path in paths, path
    wheels = [p for p in paths if p.startswith("opt/baccarat-controller/wheels/")]
    for dependency in ("pydantic_core-", "paho_mqtt-", "pyserial-", "pyusb-", "rich-", "pip-"):
        assert any(dependency in p for p in wheels), dependency
    assert not any(p.startswith(str(VENV)) for p in paths), "the venv is made by the postinst"
    link = [line for line in listing if " ./usr/bin/baccarat " in f"{line} "]
    assert len(link) == 1
    assert link[0].startswith("l"), link
    assert link[0].endswith(f"./usr/bin/baccarat -> /{VENV}/bin/baccarat")
    assert (control / "conffiles").read_text().split() == [
        "/etc/baccarat-controller/board-kiosk.env",
        "/etc/baccarat-controller/table.toml",
    ]
    for script in ("postinst", "prerm", "postrm"):
        assert os.access(control / script, os.X_OK), script
        run("sh", "-n", control / script)


def test_the_installed_command_reports_and_verifies(deb: Path, root: Path) -> None:
    baccarat = installed_baccarat(root)
    assert run(baccarat, "--version").stdout == f"{NAME} {VERSION}\n"
    body = json.loads(run(baccarat, "identity", "--json").stdout)
    assert body["verified"] is True
    assert body["version"] == VERSION
    assert f"sha256:{body['sha256']}" == fields(deb)["Baccarat-Identity"]
    assert Path(body["package"]).is_relative_to(root / VENV)
    # the daemon's own command loads (its third-party imports are in the venv)
    assert "--config" in run(baccarat, "run", "--help").stdout
    # pip ran from its wheel: the table's venv has no installer
    assert not list((root / VENV / "lib").glob("python3.*/site-packages/pip"))


def test_the_postinst_makes_the_tables_signing_key(root: Path) -> None:
    """docs/record.md: made at install, readable by its owner only, its public half beside."""
    key = root / "etc/baccarat-controller/table.key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert (root / "etc/baccarat-controller/table.key.pub").read_text().startswith("ed25519:")
    assert "-----BEGIN PRIVATE KEY-----" in key.read_text()


def test_modules_are_compiled_to_checked_hash_pyc(root: Path) -> None:
    """A .pyc that does not match its source is never run (see the postinst)."""
    package = next((root / VENV / "lib").glob("python3.*/site-packages/baccarat"))
    compiled = list(package.rglob("*.pyc"))
    assert len(compiled) > 50
    for pyc in compiled:
        flags = int.from_bytes(pyc.read_bytes()[4:8], "little")
        assert flags == 0b11, f"{pyc}: not a checked-hash pyc (flags {flags})"


def test_the_accounts_are_made(root: Path) -> None:
    passwd = {line.split(":")[0]: line for line in (root / "etc/passwd").read_text().splitlines()}
    assert passwd["baccarat"].endswith(":/var/lib/baccarat-controller:/usr/sbin/nologin")
    assert passwd["baccarat-board"].endswith(":/var/lib/baccarat-board-kiosk:/usr/sbin/nologin")
    members = {
        line.split(":")[0]: line.split(":")[3].split(",")
        for line in (root / "etc/group").read_text().splitlines()
    }
    for group, user in [
        ("dialout", "baccarat"),
        ("plugdev", "baccarat"),
        ("video", "baccarat-board"),
    ]:
        assert user in members[group], group


@pytest.fixture(scope="module")
def systemd_root(root: Path) -> Path:
    """The root with what Debian itself would add: systemd's units, cage for the kiosk.

    ``systemd-analyze verify --root`` loads every unit a unit depends on from the root,
    and checks that each ExecStart program is an executable there.
    """
    units = root / "usr/lib/systemd/system"
    for unit in Path("/usr/lib/systemd/system").iterdir():
        if not (units / unit.name).exists() and not unit.is_dir():
            shutil.copy(unit, units / unit.name, follow_symlinks=False)
    cage = shutil.which("cage")
    if cage is None:
        pytest.skip("cage is not installed (scripts/setup --system installs it)")
    shutil.copy(cage, root / "usr/bin/cage")
    return root


def verify(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["systemd-analyze", "verify", f"--root={root}", *UNITS],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_installed_units_verify(systemd_root: Path) -> None:
    done = verify(systemd_root)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    unit = (systemd_root / "usr/lib/systemd/system" / UNITS[0]).read_text()
    exec_start = "ExecStart=/usr/bin/baccarat run --config /etc/baccarat-controller/table.toml"
    assert f"\n{exec_start}\n" in unit


def test_verify_sees_a_missing_program(systemd_root: Path) -> None:
    """The check above has teeth: without the venv's command the unit is refused."""
    program = installed_baccarat(systemd_root)
    aside = program.with_name("baccarat.aside")
    program.rename(aside)
    try:
        done = verify(systemd_root)
    finally:
        aside.rename(program)
    assert "Command /usr/bin/baccarat is not executable" in done.stderr


def test_apt_would_install_it_here(deb: Path) -> None:
    """Its dependencies resolve on this Debian (simulated: nothing is installed)."""
    if shutil.which("apt-get") is None:
        pytest.skip("no apt-get")
    done = run("apt-get", "install", "--simulate", "--no-install-recommends", deb)
    assert re.search(rf"^Inst {NAME} \(", done.stdout, re.M), done.stdout


def test_postinst_refuses_files_that_do_not_verify(
    deb: Path, control: Path, tmp_path: Path
) -> None:
    """A release wheel changed after the build: the install fails, naming the file."""
    fake = tmp_path / "root"
    run("dpkg", "-x", deb, fake)
    wheel = next((fake / "opt/baccarat-controller/wheels").glob("baccarat_controller-*.whl"))
    with zipfile.ZipFile(wheel) as original:
        entries = [(info, original.read(info)) for info in original.infolist()]
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as changed:
        for info, data in entries:
            tampered = info.filename == "baccarat/rules/tableau.py"
            changed.writestr(info, data.replace(b"def ", b"def  ", 1) if tampered else data)
    env = {**os.environ, "BACCARAT_INSTALL_ROOT": str(fake)}
    done = subprocess.run(
        [control / "postinst", "configure"], env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "the installed files do not match the release's manifest" in done.stderr
    assert "  changed: rules/tableau.py\n" in done.stderr


def test_postrm_removes_the_venv_and_keeps_the_journal(control: Path, tmp_path: Path) -> None:
    fake = tmp_path / "root"
    (fake / VENV / "bin").mkdir(parents=True)
    (fake / VENV / "bin" / "python").write_text("")
    (fake / "etc/baccarat-controller").mkdir(parents=True)
    (fake / "etc/baccarat-controller/broker-password").write_text("secret\n")
    (fake / "var/lib/baccarat-controller").mkdir(parents=True)
    (fake / "var/lib/baccarat-controller/shoe-1.journal").write_bytes(b"record")
    env = {**os.environ, "BACCARAT_INSTALL_ROOT": str(fake)}

    run(control / "postrm", "remove", env=env)
    assert not (fake / "opt/baccarat-controller").exists()
    assert (fake / "etc/baccarat-controller/broker-password").exists()

    done = run(control / "postrm", "purge", env=env)
    assert not (fake / "etc/baccarat-controller").exists()
    assert (fake / "var/lib/baccarat-controller/shoe-1.journal").read_bytes() == b"record"
    assert "the journal in /var/lib/baccarat-controller is kept" in done.stderr


# ---- the kiosk ----------------------------------------------------------------------------

HEADLESS = {"WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def process(args: list[str], **options: object) -> Iterator[subprocess.Popen[str]]:
    """A process in a session of its own, ended with everything it started."""
    proc = subprocess.Popen(args, text=True, start_new_session=True, **options)  # type: ignore[call-overload]
    try:
        yield proc
    finally:
        end_group(proc)


def end_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM to the process's group, SIGKILL after 10 s; return once all of it is gone.

    Gives up 10 s after the SIGKILL (a zombie nobody reaps still counts as in the group).
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            proc.poll()
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def kiosk_command(root: Path, board_url: str, devtools: int) -> list[str]:
    """The kiosk unit's ExecStart with ${BOARD_URL} filled in, plus a DevTools port."""
    unit = (root / "usr/lib/systemd/system/baccarat-board-kiosk.service").read_text()
    exec_start = re.search(r"^ExecStart=(.*)$", unit, re.M)
    assert exec_start is not None
    words = shlex.split(exec_start.group(1))
    assert words.count("${BOARD_URL}") == 1
    words[words.index("${BOARD_URL}")] = board_url
    words.insert(words.index("--kiosk") + 1, f"--remote-debugging-port={devtools}")
    return words


def devtools_pages(port: int) -> list[dict[str, str]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=2) as reply:
            pages: list[dict[str, str]] = json.load(reply)
    except OSError:
        return []
    return [page for page in pages if page.get("type") == "page"]


def test_the_kiosk_command_shows_the_installed_web_board(root: Path) -> None:
    """The unit's cage + Chromium line, as an unprivileged user, on a headless output.

    The unit's session (PAMName=, the tty, logind's seat) needs a real console and is not
    reproduced; what runs is its ExecStart, against a board served by the installed
    package, until Chromium's DevTools endpoint reports the board page loaded.
    """
    for program in ("cage", "chromium", "Xwayland", "setpriv"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed (scripts/setup --system installs it)")
    env_file = (root / "etc/baccarat-controller/board-kiosk.env").read_text()
    default_url = re.search(r"^BOARD_URL=(.*)$", env_file, re.M)
    assert default_url is not None
    board_port, devtools = free_port(), free_port()
    url = default_url.group(1).replace("127.0.0.1:8080", f"127.0.0.1:{board_port}")
    assert url == f"http://127.0.0.1:{board_port}/?table=T07"
    home = Path(tempfile.mkdtemp(prefix="kiosk-"))  # tmp_path is not reachable by nobody
    runtime = home / "run"
    runtime.mkdir(mode=0o700)
    shutil.chown(home, "nobody")
    shutil.chown(runtime, "nobody")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    board = [str(installed_baccarat(root)), "board", "--web", str(board_port), "--table", "T07"]
    user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    try:
        with (
            process(board, stdout=subprocess.DEVNULL),
            process(
                [*user, "env", *(f"{k}={v}" for k, v in {**env, **HEADLESS}.items()),
                 *kiosk_command(root, url, devtools)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ) as kiosk,
        ):  # fmt: skip
            deadline = time.monotonic() + 60
            pages: list[dict[str, str]] = []
            while time.monotonic() < deadline and kiosk.poll() is None:
                pages = devtools_pages(devtools)
                if any(p.get("title") == "Baccarat result board" for p in pages):
                    break
                time.sleep(0.5)
            assert kiosk.poll() is None, f"the kiosk exited with status {kiosk.returncode}"
    finally:
        shutil.rmtree(home)
    assert [(p["url"], p["title"]) for p in pages] == [(url, "Baccarat result board")]
