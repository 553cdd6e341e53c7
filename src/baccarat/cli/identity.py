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

from baccarat import DISTRIBUTION, __version__
from baccarat.identity import IdentityError, Verification, verify, write_manifest


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat identity``."""
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--write-manifest",
        action="store_true",
        help="write the manifest of the package's files as they are (release builds only)",
    )


def run(args: argparse.Namespace) -> int:
    """Print the identity and verify it; 0 verified, 1 not, 2 no manifest."""
    try:
        if args.write_manifest:
            path, digest = write_manifest()
            print(f"wrote {path}\nsha256 {digest}")
            return 0
        checked = verify()
    except IdentityError as exc:
        print(f"baccarat identity: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(as_json(checked)))
    else:
        print(as_text(checked))
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
