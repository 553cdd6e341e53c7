"""``baccarat identity``: the version and the SHA-256 of the installed package's files.

Exit status: 0 when every file matches the manifest shipped with the package, 1 when a
file was changed, removed or added (each one named) or the manifest is damaged, 2 when
there is no manifest (a development checkout). :mod:`baccarat.identity` defines the
manifest and the digest.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from baccarat import DISTRIBUTION, __version__
from baccarat.identity import IdentityError, Verification, verify, write_manifest

DEFAULT_CONFIG = Path("/etc/baccarat-controller/table.toml")
"""The installed table's configuration (packaging/): its key is the one named."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat identity``."""
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--config", type=Path,
        help=f"the table's configuration, whose signing key is named (default {DEFAULT_CONFIG}"
        " if it exists)",
    )
    parser.add_argument("--key", type=Path, help="the signing key file itself")
    parser.add_argument(
        "--new-key", type=Path, metavar="KEY",
        help="make a new key to take over from KEY at the daemon's next start (KEY.next; "
        "docs/record.md, Rotating a key)",
    )
    parser.add_argument(
        "--write-manifest",
        action="store_true",
        help="write the manifest of the package's files as they are (release builds only)",
    )


def run(args: argparse.Namespace) -> int:
    """Print the identity and verify it; 0 verified, 1 not, 2 no manifest."""
    if args.new_key is not None:
        return new_key(args.new_key)
    try:
        if args.write_manifest:
            path, digest = write_manifest()
            print(f"wrote {path}\nsha256 {digest}")
            return 0
        checked = verify()
    except IdentityError as exc:
        print(f"baccarat identity: {exc}", file=sys.stderr)
        return 1
    key = signing_key(args)
    if args.json:
        print(json.dumps(as_json(checked) | {"key": key}))
    else:
        print(as_text(checked))
        print(key_text(key))
    return {True: 0, False: 1, None: 2}[checked.verified]


def as_json(checked: Verification) -> dict[str, object]:
    """The identity and the verdict as one JSON object."""
    return {
        "name": DISTRIBUTION,
        "version": __version__,
        "sha256": checked.digest,
        "files": checked.files,
        "package": str(checked.package_dir),
        "manifest": None if checked.manifest is None else str(checked.manifest),
        "verified": checked.verified,
        "changed": list(checked.changed),
        "missing": list(checked.missing),
        "extra": list(checked.extra),
    }


def as_text(checked: Verification) -> str:
    """The identity and the verdict for a person: what was checked and what differs."""
    lines = [
        f"{DISTRIBUTION} {__version__}",
        f"sha256 {checked.digest}",
        f"  the manifest of {checked.files} files under {checked.package_dir}",
    ]
    if checked.manifest is None:
        lines.append(
            "NO MANIFEST: this is a development checkout or a build made without "
            "packaging/build-deb; nothing verified"
        )
    elif checked.verified:
        lines.append(f"verified: every file matches {checked.manifest}")
    else:
        lines.append(f"NOT VERIFIED: the files differ from {checked.manifest}")
        for kind in ("changed", "missing", "extra"):
            lines.extend(f"  {kind}: {path}" for path in getattr(checked, kind))
    return "\n".join(lines)


def signing_key(args: argparse.Namespace) -> dict[str, str | None]:
    """The table's signing key in use: its file, id and public key, or why none is named.

    ``baccarat.chain`` (and ``cryptography``) are imported here, not with the module: the
    release build runs ``identity --write-manifest`` where only the package is installed.
    """
    path: Path | None = args.key
    if path is None:
        config = args.config or (DEFAULT_CONFIG if DEFAULT_CONFIG.is_file() else None)
        if config is None:
            return {"file": None, "id": None, "public": None,
                    "problem": "no table configuration (--config) or key (--key) given"}
        from baccarat.controller.config import ConfigError, load_config
        from baccarat.controller.signing import KEY_FILE

        try:
            loaded = load_config(config)
        except ConfigError as exc:
            return {"file": None, "id": None, "public": None, "problem": str(exc)}
        path = loaded.key_file or Path(loaded.journal.folder) / KEY_FILE
    try:
        from baccarat.chain import ChainError, key_id, load_key, parse_public, public_text
    except ImportError as exc:  # a bare build environment (packaging/build-wheel)
        return {"file": str(path), "id": None, "public": None, "problem": str(exc)}
    problem = None
    try:
        public = load_key(path).public_key()
    except ChainError as exc:
        problem = str(exc)
        try:  # the public half, readable by anyone, written beside the key
            public = parse_public(path.with_name(path.name + ".pub").read_text().strip())
        except (OSError, ChainError):
            return {"file": str(path), "id": None, "public": None, "problem": problem}
    return {"file": str(path), "id": key_id(public), "public": public_text(public),
            "problem": problem}


def key_text(key: dict[str, str | None]) -> str:
    """The signing key's lines for a person."""
    if key["public"] is None:
        return f"signing key: none shown: {key['problem']}"
    text = f"signing key {key['id']} ({key['file']})\n  public {key['public']}"
    if key["problem"] is not None:  # shown from the .pub beside it
        text += f"\n  KEY NOT USABLE: {key['problem']}"
    return text


def new_key(current: Path) -> int:
    """Make ``current.next``, the key the daemon hands over to at its next start."""
    from baccarat.chain import ChainError, key_id, make_key, public_text
    from baccarat.controller.signing import next_key_path

    waiting = next_key_path(current)
    if not current.exists():
        print(f"baccarat identity: {current} does not exist: no key to hand over from",
              file=sys.stderr)
        return 1
    try:
        public = make_key(waiting).public_key()
    except ChainError as exc:
        print(f"baccarat identity: {exc}", file=sys.stderr)
        return 1
    print(f"made {waiting}: key {key_id(public)}\n  public {public_text(public)}\n"
          "add it to the floor's keys file, then restart the daemon: its next event hands "
          "over to it")
    return 0
