"""Journal appends per second, with and without fdatasync.

Appends the inputs of seeded 8-deck shoes (cards with microsecond times, as the daemon
gives them) to a fresh journal in a temporary folder under ``--folder``, rotating at
every shoe, and prints records/s and microseconds per append, with the mean, p50, p99
and max of one append. The figures with fdatasync depend on the disk under ``--folder``
(and are meaningless on tmpfs, which the output names).

    python bench/journal.py [--records 20000] [--synced 2000] [--folder .]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from baccarat.controller.engine.inputs import Input, NewShoe
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.controller.journal.writer import Journal
from baccarat.rules.profiles import load_profile


def inputs(count: int) -> list[Input]:
    """``count`` inputs from seeded shoes, each with an arrival time."""
    out: list[Input] = []
    seed = 0
    while len(out) < count:
        out += list(shoe_inputs(8, seed))
        seed += 1
    start = 1718000000.0
    return [replace(inp, ts=round(start + i * 0.8, 6)) for i, inp in enumerate(out[:count])]


def run(folder: Path, batch: list[Input], *, fsync: bool) -> list[float]:
    """Append every input to a fresh journal; the seconds each append took."""
    times: list[float] = []
    shoe = 0
    with tempfile.TemporaryDirectory(dir=folder, prefix="bench-journal-") as tmp:
        journal = Journal(Path(tmp), fsync=fsync, profile=load_profile("macau"))
        journal.open()
        clock = time.perf_counter
        for inp in batch:
            began = clock()
            journal.append(inp)
            times.append(clock() - began)
            if isinstance(inp, NewShoe):
                journal.rotate({"seq": 0, "alarm_seq": 0, "shoe": shoe}, inp)
                shoe += 1
        journal.close()
    return times


def filesystem(folder: Path) -> str:
    """The type of the file system holding ``folder`` (from /proc/self/mounts)."""
    best, kind = "", "unknown"
    target = str(folder.resolve())
    try:
        with open("/proc/self/mounts", encoding="utf-8") as mounts:
            for line in mounts:
                _, mount_point, fs_type, *_ = line.split()
                inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
                if inside and len(mount_point) >= len(best):
                    best, kind = mount_point, fs_type
    except OSError:
        pass
    return kind


def report(label: str, times: list[float]) -> None:
    """One line of figures."""
    total = sum(times)
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(
        f"  {label:<16} {len(times) / total:>10,.0f} records/s  "
        f"{total / len(times) * 1e6:>8.1f} µs/append  "
        f"(p50 {statistics.median(times) * 1e6:.1f}, p99 {p99 * 1e6:.1f}, "
        f"max {ordered[-1] * 1e6:.1f} µs; {len(times):,} appends)"
    )


def main() -> None:
    """Print the rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000, help="appends without fsync")
    parser.add_argument("--synced", type=int, default=2_000, help="appends with fdatasync")
    parser.add_argument("--folder", type=Path, default=Path(), help="where the journal goes")
    args = parser.parse_args()
    print(
        f"journal appends in {args.folder.resolve()} ({filesystem(args.folder)}), "
        f"rotation at every shoe, {os.cpu_count()} CPUs"
    )
    report("no fsync", run(args.folder, inputs(args.records), fsync=False))
    report("fdatasync", run(args.folder, inputs(args.synced), fsync=True))


if __name__ == "__main__":
    main()
