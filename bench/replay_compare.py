"""The engine's bodies, byte for byte, against another version of the code: 0 must differ.

Writes one input file per seed and profile (a seeded shoe's cards with commands, dealer's
buttons, device reports, unreadable and repeated cards and time stamps mixed in at random,
so that every kind of handler runs: misdeals, corrections, voids, ends of shoes), replays
every file with this tree's code and with the reference code (``--ref``, a git revision
of this repository, extracted into a temporary directory; or ``--ref-src DIR``), and
compares what each printed: every body (as ``baccarat replay`` prints it) and every
refusal (line and reason). Prints the figures and the first difference, if any.

    python bench/replay_compare.py [--seeds 40] [--ref main] [--keep DIR]

Use it before merging a change to the engine (the split into rooms was checked so).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from baccarat.cards import shuffled_shoe

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ("macau", "house6", "csm")
ORIGINS = ("", "", "by=pit/ana ", "by=button ")
COMMANDS = (
    "open", "open", "reveal", "reveal", "void", "void_unconfirmed", "burn", "burn 2",
    "accept_as_burn", "accept_as_burn", "accept_as_burn 3", "exposed", "declare banker",
    "declare player", "declare tie", "demo on", "demo off", "end", "shoe", "cut",
    "announce_burn", "announce_burn", "device link_down cable", "device link_up",
    "device fault jam", "device bad_data 0x00", "device restart", "device clock back",
    "device publish_refused quota", "device publish_accepted", "device shoe_deaf no ack",
    "device shoe_hears", "device journal torn", "device sequence_gap 3", "device hello s1",
    "device outbox_full 10",
)

RUNNER = r"""
import sys
from pathlib import Path
from baccarat.controller.engine.replay import replay_lines
from baccarat.rules.profiles import load_profile
out = Path(sys.argv[1])
for path in sorted(Path(sys.argv[2]).glob("*.txt")):
    profile = load_profile(path.stem.split("-")[0])
    errors = []
    lines = path.read_text().splitlines()
    bodies = [m.to_json() for m in replay_lines(
        lines, profile, on_error=lambda n, t: errors.append(f"{n}: {t}"))]
    (out / path.name).write_text("\n".join(bodies + ["--"] + errors) + "\n")
"""


def inputs(profile: str, seed: int) -> list[str]:
    """One file's lines: the shoe's cards in order, with everything else among them."""
    rng = random.Random(f"{profile}/{seed}")
    decks = rng.choice((1, 2, 6, 8))
    cards = [c.code for c in shuffled_shoe(decks, seed)]
    lines, ts = [f"shoe {decks}"], 1_700_000_000.0 + seed
    for i, code in enumerate(cards[: rng.randrange(min(80, len(cards)), len(cards) + 1)]):
        while rng.random() < 0.12:
            lines.append(rng.choice(ORIGINS) + rng.choice(COMMANDS))
        roll = rng.random()
        if roll < 0.01:
            lines.append("unreadable")
        elif roll < 0.02 and i:
            lines.append(cards[rng.randrange(i)])  # a repeat: foreign in a small shoe
        ts += rng.random() * 3
        lines.append(f"@{ts:.3f} {code}" if rng.random() < 0.5 else code)
    return lines


def replay_all(src: Path, folder: Path, out: Path) -> None:
    out.mkdir()
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}
    subprocess.run(
        [sys.executable, "-c", RUNNER, str(out), str(folder)], env=env, check=True, cwd=out
    )


def extract(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--ref", default="main", help="git revision to compare with")
    parser.add_argument("--ref-src", type=Path, help="a src/ directory to compare with")
    parser.add_argument("--keep", type=Path, help="write the input files here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = args.keep or work / "inputs"
        folder.mkdir(parents=True, exist_ok=True)
        for profile in PROFILES:
            for seed in range(args.seeds):
                text = "\n".join(inputs(profile, seed)) + "\n"
                (folder / f"{profile}-{seed:03d}.txt").write_text(text)
        ref_src = args.ref_src or extract(args.ref, work / "ref")
        replay_all(ROOT / "src", folder, work / "this")
        replay_all(ref_src, folder, work / "ref-out")
        files = sorted(p.name for p in folder.glob("*.txt"))
        differ, bodies, refusals, kinds = [], 0, 0, set()
        for name in files:
            mine = (work / "this" / name).read_bytes()
            theirs = (work / "ref-out" / name).read_bytes()
            head, _, tail = mine.partition(b"\n--\n")
            bodies += head.count(b"\n") + 1
            refusals += tail.count(b"\n")
            kinds.update(re.findall(rb'"type":"alarm",.*?"kind":"([a-z_]+)"', head))
            if mine != theirs:
                differ.append(name)
        digest = hashlib.sha256(
            b"".join((work / "this" / n).read_bytes() for n in files)
        ).hexdigest()[:16]
        print(
            f"{len(files)} files ({args.seeds} seeds x {len(PROFILES)} profiles), "
            f"{bodies} bodies, {refusals} refusals, {len(kinds)} alarm kinds; sha256 {digest}; "
            f"{len(differ)} differ from {args.ref_src or args.ref}"
        )
        for name in differ[:1]:
            mine = (work / "this" / name).read_text().splitlines()
            theirs = (work / "ref-out" / name).read_text().splitlines()
            pairs = zip([*mine, ""], [*theirs, ""], strict=False)
            at = next(i for i, (a, b) in enumerate(pairs) if a != b)
            print(f"first difference: {name} output line {at + 1}\n  this: {mine[at:at+1]}\n"
                  f"  ref:  {theirs[at:at+1]}")
        return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
