"""The chain's pieces (baccarat/chain.py) and the recorder's check as events come.

The daemon, the recorder and the verifier are tested end to end elsewhere
(tests/controller/test_chain_daemon.py, tests/floor/test_chain_floor.py); here each kind
of break the floor raises an alarm for is made on purpose: a gap, a fork, a bad
signature, an unknown key, an unsigned event; and the one jump that is not a break, a
``journal_damaged`` alarm naming the events its table lost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from baccarat.chain import (
    ChainError,
    Head,
    Sealer,
    keys_from,
    load_key,
    make_key,
    public_text,
    read_keys,
    split,
)
from baccarat.floor.chain_watch import ChainWatch
from baccarat.floor.records import Received


def card(seq: int, code: str = "9S") -> bytes:
    return (b'{"schema":1,"seq":%d,"ts":1.0,"type":"card","shoe":1,"round":1,'
            b'"position":"P1","card":"%s"}' % (seq, code.encode()))


def damaged(seq: int, first: int, last: int) -> bytes:
    return json.dumps({
        "schema": 1, "seq": seq, "ts": 1.0, "type": "alarm", "id": 1,
        "kind": "journal_damaged", "lost_first": first, "lost_last": last, "text": "lost",
    }, separators=(",", ":")).encode()


def received(table: str, payload: bytes) -> Received:
    body, seal = split(payload)
    return Received(table, f"baccarat/{table}/card", json.loads(body), body.decode(), 1.0,
                    seal=seal)


@pytest.fixture
def sealer(tmp_path: Path) -> Sealer:
    return Sealer(make_key(tmp_path / "t.key"), "T1")


@pytest.fixture
def watch(sealer: Sealer) -> ChainWatch:
    return ChainWatch(keys_from({"T1": [public_text(sealer.key.public_key())]}))


def test_split_gives_the_engine_body_back_byte_for_byte(sealer: Sealer) -> None:
    for seq in range(1, 50):
        body = card(seq)
        sealed = sealer.seal(seq, body)
        assert sealed.startswith(body[:-1] + b',"chain":{"prev":"')
        again, seal = split(sealed)
        assert again == body
        assert seal is not None
    assert split(card(1)) == (card(1), None)  # nothing to take off
    # a member of another shape is left where it is (and the schema refuses the body)
    odd = card(1)[:-1] + b',"chain":{"prev":"00","key":"0","sig":"x"}}'
    assert split(odd) == (odd, None)


def test_the_same_event_is_sealed_the_same_bytes(tmp_path: Path) -> None:
    key = make_key(tmp_path / "k.key")
    one, two = Sealer(key, "T1"), Sealer(key, "T1")
    assert [one.seal(s, card(s)) for s in (1, 2, 3)] == [two.seal(s, card(s)) for s in (1, 2, 3)]
    other = Sealer(key, "T2")  # the table is in the hash: T1's event never passes as T2's
    assert other.seal(1, card(1)) != Sealer(key, "T1").seal(1, card(1))


def test_a_clean_chain_and_repeats_raise_nothing(sealer: Sealer, watch: ChainWatch) -> None:
    events = [received("T1", sealer.seal(s, card(s))) for s in range(1, 30)]
    assert watch.check(events) == []
    assert watch.check(events[10:20]) == []  # repeats after a reconnection: skipped
    assert watch.checked == 29


def test_each_break_is_one_finding_naming_the_seq(tmp_path: Path, sealer: Sealer,
                                                 watch: ChainWatch) -> None:
    sealed = {s: sealer.seal(s, card(s)) for s in range(1, 21)}
    # a gap: seq 5 never came
    assert watch.check([received("T1", sealed[s]) for s in (1, 2, 3, 4)]) == []
    [gap] = watch.check([received("T1", sealed[6])])
    assert (gap["type"], gap["table"], gap["seq"]) == ("chain_break", "T1", 6)
    assert "seq 5 to 5 missing" in gap["why"]
    # a bad signature: a card changed after it was signed
    [bad] = watch.check([received("T1", sealed[7].replace(b'"card":"9S"', b'"card":"AS"'))])
    assert bad["seq"] == 7
    assert "signature does not verify" in bad["why"]
    # a fork: seq 9 signed by the table but after another seq 8 than the one received
    fork = Sealer(sealer.key, "T1", Head(7, b"\x01" * 32))
    fork.seal(8, card(8, "KD"))
    assert watch.check([received("T1", sealed[8])]) == []  # after a break: starts anew
    [forked] = watch.check([received("T1", fork.seal(9, card(9)))])
    assert forked["seq"] == 9
    assert "prev is not the hash of seq 8" in forked["why"]
    # an unknown key, and an unsigned event
    assert watch.check([received("T1", sealed[s]) for s in (10, 11)]) == []
    stranger = Sealer(make_key(tmp_path / "s.key"), "T1", sealer.head)
    [unknown] = watch.check([received("T1", stranger.seal(21, card(21)))])
    assert "which the floor does not know" in unknown["why"]
    [unsigned] = watch.check([received("T1", card(22))])
    assert "carries no chain member" in unsigned["why"]
    assert watch.breaks == 5


def test_a_jump_is_accepted_only_where_the_event_names_the_lost_range(
    tmp_path: Path, watch: ChainWatch
) -> None:
    key = load_key(tmp_path / "t.key")
    live = Sealer(key, "T1")
    first = [received("T1", live.seal(s, card(s))) for s in (1, 2, 3)]
    at_3 = live.head
    first += [received("T1", live.seal(s, card(s))) for s in (4, 5)]
    assert watch.check(first) == []
    # the journal lost 4 and 5: the restarted table goes on from 3 past the highest seq
    # published, with the alarm that names 4 to 5 as lost
    restarted = Sealer(key, "T1", at_3)
    alarm = restarted.seal(6, damaged(6, 4, 5))
    assert b'"chain":{"after":3,' in alarm
    assert watch.check([received("T1", alarm)]) == []
    assert watch.check([received("T1", restarted.seal(7, card(7)))]) == []
    # a jump that names another range, or none, is a break
    wrong = Sealer(key, "T1", restarted.head)
    [named] = watch.check([received("T1", wrong.seal(10, damaged(10, 8, 8)))])
    assert "names seq 8 to 8 as lost" in named["why"]
    silent = Sealer(key, "T1", wrong.head)
    [jump] = watch.check([received("T1", silent.seal(s, card(s))) for s in (12, 13, 14, 15)])
    assert jump["seq"] == 15
    assert "seq 12 follows seq 10, and no journal_damaged alarm" in jump["why"]
    # the engine may clear an earlier loss's alarm first: the alarm naming it comes next
    again = Sealer(key, "T1", silent.head)
    cleared = received("T1", again.seal(20, card(20)))  # (an alarm_cleared, as far as the
    named = received("T1", again.seal(21, damaged(21, 16, 19)))  # chain is concerned)
    assert watch.check([cleared, named]) == []


def test_keys_files_and_key_files_say_what_is_wrong(tmp_path: Path) -> None:
    key = tmp_path / "t.key"
    make_key(key)
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    assert (tmp_path / "t.key.pub").read_text().startswith("ed25519:")
    os.chmod(key, 0o640)
    with pytest.raises(ChainError, match=r"has mode 0640: others than its owner may read it"):
        load_key(key)
    os.chmod(key, 0o600)
    (tmp_path / "bad.key").write_text("not a key")
    os.chmod(tmp_path / "bad.key", 0o600)
    with pytest.raises(ChainError, match="is not an unencrypted PEM private key"):
        load_key(tmp_path / "bad.key")
    keys = tmp_path / "keys.toml"
    keys.write_text("[tables]\nT1 = ['ed25519:abc']\n")
    with pytest.raises(ChainError, match="is not a 32-byte Ed25519 public key"):
        read_keys(keys)
    keys.write_text("T1 = 1\n")
    with pytest.raises(ChainError, match=r"has no \[tables\] section"):
        read_keys(keys)
    public = (tmp_path / "t.key.pub").read_text().strip()
    keys.write_text(f"[tables]\nT1 = ['{public}']\nT2 = ['{public}']\n")
    with pytest.raises(ChainError, match="is listed for both T1 and T2"):
        read_keys(keys)


def test_verify_says_what_it_cannot_check_never_a_traceback(tmp_path: Path) -> None:
    """Bad input of each kind: a clear message, exit status 2."""
    import subprocess
    import sys

    key = make_key(tmp_path / "t.key")
    keys = tmp_path / "keys.toml"
    keys.write_text(f"[tables]\nT1 = ['{public_text(key.public_key())}']\n")
    not_a_db = tmp_path / "floor.db"
    not_a_db.write_bytes(b"this is no database" * 100)
    old = tmp_path / "old.db"
    import sqlite3

    connection = sqlite3.connect(old)
    connection.execute("CREATE TABLE messages (seq BIGINT, tbl TEXT)")
    connection.execute("CREATE TABLE derived (seq BIGINT, tbl TEXT)")
    connection.commit()
    connection.close()
    journal = tmp_path / "journal"
    journal.mkdir()
    (journal / "shoe-000001.journal").write_bytes(b"#journal {not json} *00000000\n")
    cases = {
        ("--db", str(not_a_db)): "floor.db",
        ("--db", str(old)): "has no chain table",
        ("--journal", str(journal)): "shoe-000001.journal",
        ("--journal", str(tmp_path / "none")): "is not a folder",
    }
    for args, said in cases.items():
        done = subprocess.run([sys.executable, "-m", "baccarat.cli", "verify", *args,
                               "--keys", str(keys)], capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode in (1, 2), (args, done.stdout, done.stderr)
        assert said in done.stdout + done.stderr, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
