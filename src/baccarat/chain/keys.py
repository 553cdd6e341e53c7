"""The table's key and the floor's keys: made, loaded, written and read as text.

The table's Ed25519 private key (a PEM file only its owner may read, its public half
beside it), a public key's short id and its text (``ed25519:<base64>``), and the floor's
keys file (TOML: each table's public keys), as :class:`Keys`. A key or a keys file that
cannot be used is a :class:`ChainError` that says why.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from baccarat.errors import BaccaratError

PUBLIC_PREFIX: Final = "ed25519:"
"""How a public key is written: ``ed25519:`` and its 32 bytes in standard base64."""


class ChainError(BaccaratError):
    """A key that cannot be used, a keys file that cannot be read: the text says why."""


def key_id(public: Ed25519PublicKey) -> str:
    """The key's short name: the first 8 bytes of SHA-256 of its raw 32 bytes, in hex."""
    return hashlib.sha256(raw_public(public)).digest()[:8].hex()


def raw_public(public: Ed25519PublicKey) -> bytes:
    """The public key's 32 bytes."""
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_text(public: Ed25519PublicKey) -> str:
    """``ed25519:<base64>``: how the key is printed, published and listed in a keys file."""
    return PUBLIC_PREFIX + base64.b64encode(raw_public(public)).decode("ascii")


def parse_public(text: str) -> Ed25519PublicKey:
    """A public key written as :func:`public_text` writes it; :class:`ChainError` if not."""
    if not text.startswith(PUBLIC_PREFIX):
        raise ChainError(f"{text[:60]!r} is not a public key (expected {PUBLIC_PREFIX}<base64>)")
    try:
        raw = base64.b64decode(text[len(PUBLIC_PREFIX):], validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise ChainError(f"{text[:60]!r} is not a 32-byte Ed25519 public key") from None


def check_permissions(path: Path) -> None:
    """:class:`ChainError` unless only the file's owner may read or write it."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ChainError(f"key file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ChainError(f"key file {path} is not a regular file")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise ChainError(
            f"key file {path} has mode {mode:04o}: others than its owner may read it, so "
            f"the table's signature proves nothing; refused (chmod 600 {path}, and make a "
            "new key if it may have been read)"
        )


def load_key(path: Path) -> Ed25519PrivateKey:
    """The table's private key from a PEM file that only its owner may read."""
    check_permissions(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ChainError(f"key file {path}: {exc.strerror or exc}") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ChainError(f"key file {path} is not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ChainError(f"key file {path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def make_key(path: Path) -> Ed25519PrivateKey:
    """A new key written to ``path`` (mode 0600, which must not exist yet).

    Its public half is written beside it, ``path.pub``, for anyone to read.
    """
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise ChainError(f"cannot create key file {path}: {exc.strerror or exc}") from None
    try:
        os.write(fd, pem)
        os.fsync(fd)
    except OSError as exc:  # a full or failing disk: no half key left behind
        os.close(fd)
        with contextlib.suppress(OSError):
            path.unlink()
        raise ChainError(f"cannot write key file {path}: {exc.strerror or exc}") from None
    os.close(fd)
    public = path.with_name(path.name + ".pub")
    with contextlib.suppress(OSError):  # a convenience: the public half, for anyone to read
        public.write_text(public_text(key.public_key()) + "\n", encoding="ascii")
    return key


def load_or_make(path: Path) -> tuple[Ed25519PrivateKey, bool]:
    """The key in ``path``, or a new one written there; and whether it was made now."""
    if path.exists():
        return load_key(path), False
    return make_key(path), True


@dataclass(frozen=True, slots=True)
class Keys:
    """The public keys the floor knows: key id -> (table, key)."""

    by_id: Mapping[str, tuple[str, Ed25519PublicKey]]

    def tables(self) -> set[str]:
        """The tables that have a key."""
        return {table for table, _ in self.by_id.values()}

    def find(self, ident: str) -> tuple[str, Ed25519PublicKey] | None:
        """The table and key of a key id, if known."""
        return self.by_id.get(ident)


def keys_from(entries: Mapping[str, list[str]]) -> Keys:
    """A table -> public keys mapping made into :class:`Keys`."""
    by_id: dict[str, tuple[str, Ed25519PublicKey]] = {}
    for table, texts in entries.items():
        for text in texts:
            public = parse_public(text)
            ident = key_id(public)
            if ident in by_id and by_id[ident][0] != table:
                raise ChainError(f"key {ident} is listed for both {by_id[ident][0]} and {table}")
            by_id[ident] = (table, public)
    return Keys(by_id)


def read_keys(path: Path) -> Keys:
    """The floor's keys file (TOML): ``[tables]`` with ``T07 = ["ed25519:...", ...]``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ChainError(f"keys file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ChainError(f"keys file {path} is not TOML: {exc}") from None
    tables = data.get("tables")
    if not isinstance(tables, dict):
        raise ChainError(f"keys file {path} has no [tables] section")
    entries: dict[str, list[str]] = {}
    for table, value in tables.items():
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ChainError(f"keys file {path}: {table} is not a key or a list of keys")
        entries[table] = texts
    try:
        return keys_from(entries)
    except ChainError as exc:
        raise ChainError(f"keys file {path}: {exc}") from None
