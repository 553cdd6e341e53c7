r"""The installed software's identity: its version and one SHA-256 over its files.

The *manifest* of a package folder lists every file of the ``baccarat`` package, one line
each, in the format of ``sha256sum``: the file's SHA-256 in lowercase hex, two spaces, its
path relative to the package folder with ``/`` between names. Lines are sorted by path,
compared as UTF-8 bytes (``LC_ALL=C sort``). Left out: folders named ``__pycache__`` and
``*.pyc`` files (compiled on the table computer when the package is installed) and the
manifest itself, ``MANIFEST.sha256`` at the top of the package.

The *identity* is the SHA-256 of that manifest's text as the files are now. A release
build writes the manifest into the package (``baccarat identity --write-manifest``, run by
``packaging/build-deb``); on a table, :func:`verify` compares the files with it and names
every file changed, missing or added. When every file matches, the identity equals
``sha256sum MANIFEST.sha256``, so an inspector can check it with coreutils alone::

    cd .../site-packages/baccarat
    find . -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path ./MANIFEST.sha256 \
        -printf '%P\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum

The manifest names which files differ; the identity, compared with the one recorded when
the release was approved, says whether the software is that release.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from baccarat.errors import BaccaratError

MANIFEST_NAME: Final = "MANIFEST.sha256"
"""The manifest's file name, at the top of the package folder."""
PACKAGE_DIR: Final = Path(__file__).resolve().parent
"""The folder of the running ``baccarat`` package."""
_LINE: Final = re.compile(r"([0-9a-f]{64})  (\S(?:.*\S)?)")


class IdentityError(BaccaratError):
    """A manifest that cannot be read or written; the text names the file and the line."""


@dataclass(frozen=True, slots=True)
class Verification:
    """The package's files compared with its manifest.

    ``manifest`` is None when the package has no manifest (a development checkout): then
    nothing was compared and :attr:`verified` is None.
    """

    package_dir: Path
    digest: str
    files: int
    manifest: Path | None
    changed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()

    @property
    def verified(self) -> bool | None:
        """True if every file matches the manifest, False if not, None with no manifest."""
        if self.manifest is None:
            return None
        return not (self.changed or self.missing or self.extra)


def package_files(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """The manifest's paths under ``package_dir``, in manifest order."""
    found: list[str] = []
    for folder, subfolders, names in os.walk(package_dir):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        relative = Path(folder).relative_to(package_dir)
        for name in names:
            path = (relative / name).as_posix()
            if name.endswith(".pyc") or path == MANIFEST_NAME:
                continue
            found.append(path)
    return sorted(found, key=lambda path: path.encode("utf-8", "surrogateescape"))


def file_digests(package_dir: Path = PACKAGE_DIR) -> dict[str, str]:
    """The SHA-256 of every manifest file under ``package_dir``, by path, in manifest order."""
    digests: dict[str, str] = {}
    for path in package_files(package_dir):
        try:
            with (package_dir / path).open("rb") as file:
                digests[path] = hashlib.file_digest(file, "sha256").hexdigest()
        except OSError as exc:
            raise IdentityError(f"cannot read {package_dir / path}: {exc.strerror}") from None
    return digests


def manifest_text(digests: dict[str, str]) -> str:
    """The manifest of these file digests: ``sha256  path`` lines, as ``sha256sum`` prints."""
    for path in digests:
        if "\n" in path or "\\" in path or path != path.strip() or not _is_utf8(path):
            raise IdentityError(f"the file name {path!r} cannot be written in a manifest")
    return "".join(f"{digest}  {path}\n" for path, digest in digests.items())


def identity_digest(manifest: str) -> str:
    """The identity: the SHA-256 of a manifest's text, in lowercase hex."""
    return hashlib.sha256(manifest.encode("utf-8")).hexdigest()


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_manifest(path: Path) -> dict[str, str]:
    """The digests a manifest file lists, by path; :class:`IdentityError` if it is damaged."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise IdentityError(f"cannot read the manifest {path}: {reason}") from None
    digests: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        found = _LINE.fullmatch(line)
        if found is None:
            raise IdentityError(f"{path}:{number}: not '<64 hex digits>  <path>': {line!r}")
        digest, name = found.groups()
        if name in digests:
            raise IdentityError(f"{path}:{number}: {name} is listed twice")
        digests[name] = digest
    return digests


def verify(package_dir: Path = PACKAGE_DIR) -> Verification:
    """Hash the package's files and compare them with its manifest, if it has one."""
    now = file_digests(package_dir)
    digest = identity_digest(manifest_text(now))
    manifest = package_dir / MANIFEST_NAME
    if not manifest.exists():
        return Verification(package_dir, digest, len(now), None)
    shipped = read_manifest(manifest)
    return Verification(
        package_dir,
        digest,
        len(now),
        manifest,
        changed=tuple(p for p in now if p in shipped and shipped[p] != now[p]),
        missing=tuple(p for p in shipped if p not in now),
        extra=tuple(p for p in now if p not in shipped),
    )


def write_manifest(package_dir: Path = PACKAGE_DIR) -> tuple[Path, str]:
    """Write the manifest of the package's files as they are; its path and the identity."""
    text = manifest_text(file_digests(package_dir))
    path = package_dir / MANIFEST_NAME
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise IdentityError(f"cannot write the manifest {path}: {exc.strerror}") from None
    return path, identity_digest(text)
