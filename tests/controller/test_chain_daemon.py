"""Every event the real daemon publishes is chained and signed; its journal verifies.

A real daemon reads a virtual framed shoe on a pty and publishes to a real mosquitto. Two
shoes are dealt (two journal files, each header with its signed head), the daemon is
killed in the second and started again (the chain goes on across the restart, and what it
publishes again is signed as it was the first time). Then ``baccarat verify --journal``
finds the journal intact, and finds it broken where a card is changed in a record; a
journal of another table, an unknown key and a key file others may read are said plainly.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

from baccarat.chain import Checker, Link, Seal, keys_from, load_key, make_key, public_text
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder, retained_body
from support.mosquitto import Mosquitto

SHOE_TIMEOUT = 90.0
CARD_RECORD = re.compile(rb"^(\d+ \S+ )([2-9TJQKA][SHDC])$")


def verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "baccarat.cli", "verify", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def shoes_closed(count: int) -> Any:
    def done(recorder: Recorder) -> bool:
        shoes = recorder.bodies("shoe")
        return sum(1 for b in shoes if b.get("phase") == "closed") >= count
    return done


def change_a_card(path: Path, nth: int) -> int:
    """Change the ``nth`` card record of a journal file, its CRC made right; its number."""
    lines = path.read_bytes().split(b"\n")
    seen = 0
    for i, line in enumerate(lines):
        body, _, _ = line.rpartition(b" *")
        found = CARD_RECORD.match(body)
        if found is None:
            continue
        seen += 1
        if seen < nth:
            continue
        card = found.group(2)
        other = b"AS" if card != b"AS" else b"KD"
        new = found.group(1) + other
        lines[i] = b"%s *%08x" % (new, zlib.crc32(new))
        path.write_bytes(b"\n".join(lines))
        return int(found.group(1).split()[0])
    raise AssertionError(f"no card record {nth} in {path}")


async def test_every_event_is_signed_across_a_restart_and_the_journal_verifies(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    link = str(tmp_path / "shoe")
    daemon = Daemon(tmp_path, mosquitto, device=link, rules={"decks": 2})
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                await shoe.play(Dealer(decks=2, seed=3).events())
                await board.wait_for(shoes_closed(1), SHOE_TIMEOUT)
                second = list(Dealer(decks=2, seed=4).events())
                half = len(second) // 2
                await shoe.play(second[:half])
                await asyncio.sleep(0.5)
                await asyncio.to_thread(daemon.kill)  # a power cut mid-shoe
                await asyncio.to_thread(daemon.start)
                await shoe.play(second[half:])
                await board.wait_for(shoes_closed(2), SHOE_TIMEOUT)
                status = await retained_body(mosquitto)
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    assert "signing key: none was installed; made" in daemon.log_file.read_text()
    key = load_key(daemon.journal / "table.key")
    public = public_text(key.public_key())
    assert status is not None
    assert status["key"] == public

    # every event signed and chained, each seq signed the same way each time it came
    first: dict[int, Seal] = {}
    for seq, seal in board.seals:
        assert first.setdefault(seq, seal) == seal, f"seq {seq} published with another seal"
    events = {b["seq"]: b for _, b in board.received if isinstance(b.get("seq"), int)}
    assert sorted(first) == sorted(events) == list(range(1, len(events) + 1))
    checker = Checker("T1", keys_from({"T1": [public]}))
    bodies = _engine_bodies(daemon)
    for seq in sorted(first):
        assert checker.check(Link(seq, bodies[seq], first[seq])) is None
    assert len(daemon.journal_files()) >= 2

    result = verify("--journal", str(daemon.journal), "--key", public, "--table", "T1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"intact: table T1: {len(daemon.journal_files())} file(s)" in result.stdout
    assert f"event(s) to seq {max(events)}" in result.stdout

    # the floor's keys file serves as well, and the table is then the journal's own
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[tables]\nT1 = ["{public}"]\n')
    assert verify("--journal", str(daemon.journal), "--keys", str(keys)).returncode == 0

    # another table's journal, an unknown key: said plainly, no traceback
    other = verify("--journal", str(daemon.journal), "--keys", str(keys), "--table", "T9")
    assert other.returncode == 2
    assert "is table T1's journal, not T9's" in other.stderr
    stranger = public_text(make_key(tmp_path / "stranger.key").public_key())
    unknown = verify("--journal", str(daemon.journal), "--key", stranger, "--table", "T1")
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr
    assert "which is no known key of any table" in unknown.stderr
    for done in (other, unknown):
        assert "Traceback" not in done.stderr

    # a card changed in the older file (caught by the next file's header) ...
    files = daemon.journal_files()
    saved = {path: path.read_bytes() for path in files}
    number = change_a_card(files[-2], 5)
    broken = verify("--journal", str(daemon.journal), "--keys", str(keys))
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert f"{files[-1].name}: the header signs the chain head at seq" in broken.stdout
    files[-2].write_bytes(saved[files[-2]])
    # ... and in the newest file (caught by the chain file beside the journal)
    number = change_a_card(files[-1], 3)
    broken = verify("--journal", str(daemon.journal), "--keys", str(keys))
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "chain: the file signs the chain head at seq" in broken.stdout, (number, broken.stdout)
    files[-1].write_bytes(saved[files[-1]])
    assert verify("--journal", str(daemon.journal), "--keys", str(keys)).returncode == 0


def _engine_bodies(daemon: Daemon) -> dict[int, bytes]:
    """Each seq's engine body, as ``journal show --messages`` of every file replays it."""
    out: dict[int, bytes] = {}
    for path in daemon.journal_files():
        lines = subprocess.run(
            [sys.executable, "-m", "baccarat.cli", "journal", "show", str(path), "--messages"],
            capture_output=True, check=True, timeout=60,
        ).stdout
        for line in lines.splitlines():
            out.setdefault(json.loads(line)["seq"], line)
    return out


async def test_a_key_file_others_may_read_is_refused_plainly(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    key = tmp_path / "table.key"
    make_key(key)
    key.chmod(0o644)
    daemon = Daemon(tmp_path, mosquitto)
    daemon.config.write_text(f'key_file = "{key}"\n' + daemon.config.read_text())
    try:
        daemon.start(wait_ready=False)
        assert daemon.wait(30) == 2
    finally:
        daemon.close()
    log = daemon.log_file.read_text()
    assert f"key file {key} has mode 0644" in log
    assert "Traceback" not in log
    key.chmod(0o600)
    missing = tmp_path / "nowhere.key"
    daemon.config.write_text(daemon.config.read_text().replace(str(key), str(missing)))
    try:
        daemon.start(wait_ready=False)
        assert daemon.wait(30) == 2
    finally:
        daemon.close()
    assert f"key file {missing} (key_file in the configuration) does not exist" in daemon.log()


async def test_a_key_is_rotated_by_a_hand_over_the_old_key_signs(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """A new key made beside the key takes over at the next start; the old key suffices."""
    link = str(tmp_path / "shoe")
    daemon = Daemon(tmp_path, mosquitto, device=link, rules={"decks": 2})
    events = list(Dealer(decks=2, seed=5).events())
    third = len(events) // 3
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                await shoe.play(events[:third])
                await asyncio.sleep(0.5)
                assert await asyncio.to_thread(daemon.stop) == 0
                key_file = daemon.journal / "table.key"
                old = public_text(load_key(key_file).public_key())
                made = await asyncio.to_thread(
                    subprocess.run,
                    [sys.executable, "-m", "baccarat.cli", "identity", "--new-key",
                     str(key_file)], capture_output=True, text=True, timeout=60, check=True)
                new = made.stdout.split("public ")[1].split()[0]
                await asyncio.to_thread(daemon.start)
                await shoe.play(events[third:2 * third])
                await asyncio.sleep(0.5)
                assert await asyncio.to_thread(daemon.stop) == 0
                await asyncio.to_thread(daemon.start)  # the hand-over kept across a restart
                await shoe.play(events[2 * third:])
                await board.wait_for(shoes_closed(1), SHOE_TIMEOUT)
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    assert "signing key: handed over from key" in daemon.log_file.read_text()
    assert public_text(load_key(key_file).public_key()) == new
    first: dict[int, Seal] = {}
    for seq, seal in board.seals:
        first.setdefault(seq, seal)
    handovers = [seq for seq, seal in first.items() if seal.handover is not None]
    assert len(handovers) == 1
    checker = Checker("T1", keys_from({"T1": [old]}))  # the old key alone
    bodies = _engine_bodies(daemon)
    for seq in sorted(first):
        assert checker.check(Link(seq, bodies[seq], first[seq])) is None, seq
    result = verify("--journal", str(daemon.journal), "--key", old, "--table", "T1")
    assert result.returncode == 0, result.stdout + result.stderr
    # a key that no known key handed over to is refused
    stranger = public_text(make_key(tmp_path / "stranger.key").public_key())
    checker = Checker("T1", keys_from({"T1": [stranger]}))
    assert checker.check(Link(1, bodies[1], first[1])) is not None
