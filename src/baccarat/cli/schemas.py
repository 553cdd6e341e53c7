"""``baccarat schemas [--out DIR] [--check]``: the JSON Schemas of every published message.

Board makers read these, not the Python. ``--check`` exits 1 when the files in the folder
differ from what the code would write (a test runs it, so stale schemas fail the build).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from baccarat.messages.catalog import rendered_schemas

DEFAULT_DIR = Path("schemas")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat schemas``."""
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR, help="folder (./schemas)")
    parser.add_argument("--check", action="store_true", help="only check the folder is fresh")


def run(args: argparse.Namespace) -> int:
    """Write the schemas, or check them."""
    folder: Path = args.out
    stale = []
    for name, text in rendered_schemas().items():
        path = folder / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(name)
        if not args.check:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"stale schemas in {folder}: {', '.join(stale)}; run 'baccarat schemas'",
              file=sys.stderr)
        return 1
    if not args.check:
        print(f"{len(stale)} schema file(s) written to {folder}")
    return 0
