"""The chain and the signatures: what they cost per event, and what a check costs a shoe.

    python bench/chain.py [--shoes 3] [--repeat 5]

Prints, on this machine:

* per event: the daemon's sealing (SHA-256 of the link and an Ed25519 signature, the
  chain member appended: ``TableChain.payload`` less the engine's own ``to_bytes``), the
  recorder's taking the member off and checking the event (``split`` and
  ``Checker.check``: hash, signature verified, link), and the hash alone (what
  ``verify --journal`` does per event, which has no signature to check);
* per shoe: ``baccarat verify --journal`` and ``--db`` (SQLite) in process, on the
  journal and the database of ``--shoes`` seeded 8-deck shoes dealt through the engine
  and sealed as the daemon seals them.

Each figure is the best of ``--repeat`` runs (the machine is shared: the best run is the
one least disturbed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from baccarat.chain import (
    Checker,
    Head,
    Link,
    Sealer,
    keys_from,
    make_key,
    next_link,
    public_text,
    split,
)
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import Input, NewShoe
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.controller.journal.writer import Journal
from baccarat.controller.journal_check import verify_journal
from baccarat.controller.signing import TableChain
from baccarat.floor.records import Received
from baccarat.floor.store import open_store
from baccarat.floor.verify import verify_store
from baccarat.messages.catalog import make_serializers
from baccarat.rules.profiles import load_profile


def shoes(count: int) -> list[list[Input]]:
    """Seeded 8-deck shoes, each up to the input that closes it (as bench/engine.py)."""
    out = []
    for seed in range(count):
        inputs = list(shoe_inputs(8, seed))
        engine = Engine(load_profile("macau"))
        for n, inp in enumerate(inputs, 1):
            engine.feed(inp)
            if engine.shoe is not None and engine.shoe.phase == "closed":
                inputs = inputs[:n]
                break
        out.append(inputs)
    return out


def best(runs: list[float]) -> float:
    return min(runs)


def per_event(bodies: list[bytes], repeat: int, folder: Path) -> None:
    key = make_key(folder / "bench.key")
    keys = keys_from({"T1": [public_text(key.public_key())]})
    n = len(bodies)
    seal_runs, check_runs, hash_runs = [], [], []
    for _ in range(repeat):
        sealer = Sealer(key, "T1")
        started = time.perf_counter()
        sealed = [sealer.seal(seq, body) for seq, body in enumerate(bodies, start=1)]
        seal_runs.append((time.perf_counter() - started) / n)
        checker = Checker("T1", keys)
        started = time.perf_counter()
        for seq, payload in enumerate(sealed, start=1):
            body, seal = split(payload)
            assert checker.check(Link(seq, body, seal)) is None
        check_runs.append((time.perf_counter() - started) / n)
        head = Head()
        started = time.perf_counter()
        for seq, body in enumerate(bodies, start=1):
            _, head = next_link("T1", head, seq, body, sealer.id)
        hash_runs.append((time.perf_counter() - started) / n)
    size = statistics.mean(len(s) - len(b) for s, b in zip(sealed, bodies, strict=True))
    print(f"per event, {n} events of {len(bodies) // 700 or 1}+ shoes (best of {repeat}):")
    print(f"  seal (hash + Ed25519 sign + member):      {best(seal_runs) * 1e6:7.1f} us")
    print(f"  check (split + hash + verify + link):     {best(check_runs) * 1e6:7.1f} us")
    print(f"  hash only (verify --journal per event):   {best(hash_runs) * 1e6:7.1f} us")
    print(f"  bytes added to a body:                    {size:7.0f}")


def per_shoe(inputs: list[list[Input]], repeat: int, folder: Path) -> None:
    """Write a real journal and a real SQLite database of the shoes, sealed; check both."""
    profile = load_profile("macau")
    journal_dir = folder / "journal"
    key = make_key(folder / "table.key")
    keys = keys_from({"T1": [public_text(key.public_key())]})
    chain = TableChain(key, "T1", journal_dir)
    journal = Journal(journal_dir, fsync=False, profile=profile, table="T1")
    journal.chain_head = chain.signed_head
    journal.open()
    engine = Engine(profile)
    store = open_store(str(folder / "floor.db"))

    events = 0
    for shoe in inputs:
        batch: list[Received] = []
        for inp in shoe:
            counters = engine.counters() if isinstance(inp, NewShoe) else None
            head = chain.signed_head() if counters is not None else None
            journal.append(inp)
            outcome = engine.feed(inp)
            for message in outcome.messages:
                body, seal = split(chain.payload(message))
                batch.append(Received("T1", f"baccarat/T1/{message.topic}",
                                      json.loads(body), body.decode(), time.time(), seal=seal))
                events += 1
            if counters is not None:
                journal.rotate(counters, inp, head)
        store.add(batch)
    chain.write()
    journal.close()
    journal_runs, db_runs = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        report = verify_journal(journal_dir, keys)
        journal_runs.append(time.perf_counter() - started)
        assert report.broken is None, report.broken
        started = time.perf_counter()
        checked = verify_store(store, keys)
        db_runs.append(time.perf_counter() - started)
        assert checked.intact, checked.tables
    store.close()
    count = len(inputs)
    print(f"per shoe ({count} shoes of 8 decks, {events} events, {events // count} a shoe; "
          f"best of {repeat}):")
    print(f"  verify --journal: {best(journal_runs) / count * 1e3:7.1f} ms a shoe "
          f"({report.events} events, {report.heads} signed heads)")
    print(f"  verify --db (SQLite): {best(db_runs) / count * 1e3:7.1f} ms a shoe")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    make_serializers()
    inputs = shoes(args.shoes)
    bodies = []
    for shoe in inputs[:1]:
        engine = Engine(load_profile("macau"))
        for inp in shoe:
            bodies += [m.to_bytes() for m in engine.feed(inp).messages]
    with tempfile.TemporaryDirectory() as folder:
        per_event(bodies, args.repeat, Path(folder))
    with tempfile.TemporaryDirectory() as folder:
        per_shoe(inputs, args.repeat, Path(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
