"""The table's chain and signatures: every event hashed onto the one before and signed.

docs/record.md, "The chain and the signatures", is the design; this module is all of its
cryptography, shared by the daemon (which seals), the recorder (which checks as it
stores) and ``baccarat verify`` (which checks offline). Ed25519 and SHA-256 come from
``cryptography``; nothing here is home-made but the layout of the bytes signed.

An event is an engine message with a ``seq``. Its published body is the engine's body
(what ``baccarat replay`` prints, byte for byte) with one trailing member added::

    {...engine's fields...,"chain":{"prev":"<64 hex>","key":"<16 hex>","sig":"<86 b64url>"}}

(``"after":N,`` first when the event does not follow seq - 1: the table continues past
events its journal lost, and names them). :func:`split` takes the member off again, by its
exact shape, and gives the engine's body back byte for byte.

The event's hash is the SHA-256 of :func:`link_bytes` (a domain tag, the table, ``after``,
the previous event's hash and the engine's body); the signature is Ed25519
over that hash by the table's key. The next event's ``prev`` is that hash.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from baccarat.errors import BaccaratError

LINK_TAG: Final = b"baccarat-chain-1\x00"
"""The domain of an event's hash: no other bytes this package signs start with it."""
HEAD_TAG: Final = b"baccarat-head-1\x00"
"""The domain of a signed chain head (a journal file's header, the ``chain`` file)."""
HANDOVER_TAG: Final = b"baccarat-handover-1\x00"
"""The domain of a key hand-over: the old key signs the new one."""
GENESIS: Final = bytes(32)
"""``prev`` of a table's first event: no event before it."""
HASHES_KEPT: Final = 200_000
"""Events whose hash a checker keeps to check an ``after`` against (the newest)."""
LOST_FIELDS: Final = ("lost_first", "lost_last")
NAMED_WITHIN: Final = 2
"""Events after a jump within which the ``journal_damaged`` alarm that names it must come."""
"""The fields of a ``journal_damaged`` alarm that name the seq range its table lost."""
PUBLIC_PREFIX: Final = "ed25519:"
"""How a public key is written: ``ed25519:`` and its 32 bytes in standard base64."""

MEMBER_MAX: Final = 640
"""Bytes of the longest chain member (a hand-over's included, with room): :func:`split`
looks for it in a body's last ones only, whatever the body's length."""
_MEMBER: Final = re.compile(
    rb',"chain":\{(?:"after":(0|[1-9][0-9]{0,18}),)?'
    rb'(?:"handover":\{"from":"([0-9a-f]{16})","pub":"([A-Za-z0-9_-]{43})",'
    rb'"sig":"([A-Za-z0-9_-]{86})"\},)?"prev":"([0-9a-f]{64})",'
    rb'"key":"([0-9a-f]{16})","sig":"([A-Za-z0-9_-]{86})"\}\}\Z'
)


class ChainError(BaccaratError):
    """A key that cannot be used, a keys file that cannot be read: the text says why."""


# ---------------------------------------------------------------- keys


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


# ---------------------------------------------------------------- the link


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _unb64(text: bytes | str) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return base64.urlsafe_b64decode(raw + b"=" * (-len(raw) % 4))


@dataclass(frozen=True, slots=True)
class Handover:
    """A key hand-over: the old key (``old``, its id) signs the new one for a table and seq."""

    old: str
    pub: bytes
    """The new key's 32 raw bytes."""
    sig: bytes

    def member(self) -> bytes:
        """Its part of the chain member."""
        return (b'"handover":{"from":"' + self.old.encode() + b'","pub":"' + _b64(self.pub) +
                b'","sig":"' + _b64(self.sig) + b'"},')

    def as_json(self, seq: int) -> dict[str, object]:
        """As a signed head carries it (with the seq of the event that made it)."""
        return {"seq": seq, "from": self.old, "pub": _b64(self.pub).decode(),
                "sig": _b64(self.sig).decode()}

    @property
    def new_id(self) -> str:
        """The new key's id."""
        return hashlib.sha256(self.pub).digest()[:8].hex()


def handover_bytes(table: str, seq: int, pub: bytes) -> bytes:
    """What the old key signs to hand a table over to ``pub`` at event ``seq``."""
    return HANDOVER_TAG + table.encode() + b"\x00" + str(seq).encode() + b"\x00" + pub


@dataclass(frozen=True, slots=True)
class Seal:
    """The chain member of a published body."""

    prev: bytes
    key: str
    sig: bytes
    after: int | None = None
    """The seq of the previous event when it is not seq - 1 (events lost and named)."""
    handover: Handover | None = None
    """On the first event signed by a new key: the old key's hand-over to it."""

    def member(self) -> bytes:
        """The bytes that close the body: ``,"chain":{...}}``."""
        after = b"" if self.after is None else b'"after":%d,' % self.after
        handover = b"" if self.handover is None else self.handover.member()
        return (b',"chain":{' + after + handover + b'"prev":"' + self.prev.hex().encode() +
                b'","key":"' + self.key.encode() + b'","sig":"' + _b64(self.sig) + b'"}}')


@dataclass(frozen=True, slots=True)
class Head:
    """The newest event of the chain: its seq and its hash (seq 0, zeros: none yet)."""

    seq: int = 0
    hash: bytes = GENESIS


def link_bytes(table: str, body: bytes, prev: bytes, after: int | None) -> bytes:
    """What an event's hash is the SHA-256 of (the key is not in it: the signature binds it)."""
    return b"".join((
        LINK_TAG, table.encode(), b"\x00", b"" if after is None else str(after).encode(),
        b"\x00", prev, body,
    ))


def event_hash(table: str, body: bytes, seal: Seal) -> bytes:
    """The hash of an event: what its signature signs and the next event's ``prev``."""
    return hashlib.sha256(link_bytes(table, body, seal.prev, seal.after)).digest()


def next_link(table: str, head: Head, seq: int, body: bytes, key: str) -> tuple[Seal, Head]:
    """The seal (unsigned) of event ``seq`` after ``head``, and the head after it.

    What the sealer signs and what a verifier of a journal, which has no private key,
    makes again from the replayed bodies.
    """
    after = None if head.seq == seq - 1 else head.seq
    seal = Seal(head.hash, key, b"", after)
    return seal, Head(seq, event_hash(table, body, seal))


def check_head(value: object, table: str, keys: Keys) -> Head:
    """A signed head checked: its key is ``table``'s and its signature verifies."""
    head, ident, sig = read_head(value)
    found = keys.find(ident)
    if found is None and isinstance(value, Mapping) and "handover" in value:
        found = _handed_over(value["handover"], table, keys, ident)
    if found is None:
        raise ChainError(f"signed by key {ident}, which is no known key of any table")
    owner, public = found
    if owner != table:
        raise ChainError(f"signed by key {ident}, which is table {owner}'s, not {table}'s")
    try:
        public.verify(sig, head_bytes(table, head))
    except InvalidSignature:
        raise ChainError(f"its signature does not verify under key {ident}") from None
    return head


def _handed_over(
    value: object, table: str, keys: Keys, ident: str
) -> tuple[str, Ed25519PublicKey] | None:
    """The key ``ident`` as a signed head's hand-over gives it, if a known key signed it."""
    if not isinstance(value, Mapping):
        return None
    seq, old, pub, sig = (value.get(k) for k in ("seq", "from", "pub", "sig"))
    if not (isinstance(seq, int) and isinstance(old, str) and isinstance(pub, str)
            and isinstance(sig, str)):
        return None
    try:
        handover = Handover(old, _unb64(pub), _unb64(sig))
        public = verified_handover(handover, table, seq, keys)
    except (ValueError, ChainError):
        return None
    return (table, public) if handover.new_id == ident else None


def verified_handover(
    handover: Handover, table: str, seq: int, keys: Keys,
    learned: Mapping[str, Ed25519PublicKey] | None = None,
) -> Ed25519PublicKey:
    """The new key of a hand-over that a known key of ``table`` signed; else ChainError."""
    found = keys.find(handover.old)
    old = found[1] if found is not None and found[0] == table else None
    if old is None and learned is not None:
        old = learned.get(handover.old)
    if old is None:
        raise ChainError(f"a hand-over from key {handover.old}, which is no known key of "
                         f"table {table}")
    try:
        old.verify(handover.sig, handover_bytes(table, seq, handover.pub))
        return Ed25519PublicKey.from_public_bytes(handover.pub)
    except (InvalidSignature, ValueError):
        raise ChainError(f"a hand-over to key {handover.new_id} that key {handover.old} did "
                         "not sign") from None


def split(payload: bytes) -> tuple[bytes, Seal | None]:
    """The engine's body and the seal of a published body (no seal: the body as it is)."""
    tail = max(0, len(payload) - MEMBER_MAX)  # a member is at the end: no scan of the rest
    found = _MEMBER.search(payload, tail)
    if found is None:
        return payload, None
    after, old, pub, old_sig, prev, key, sig = found.groups()
    handover = None if old is None else Handover(old.decode(), _unb64(pub), _unb64(old_sig))
    seal = Seal(
        bytes.fromhex(prev.decode()), key.decode(), _unb64(sig),
        None if after is None else int(after), handover,
    )
    return payload[: found.start()] + b"}", seal


class Sealer:
    """The daemon's side: seals each event onto the one before, with the table's key."""

    def __init__(self, key: Ed25519PrivateKey, table: str, head: Head = Head()) -> None:
        self.key = key
        self.table = table
        self.id = key_id(key.public_key())
        self.head = head
        self._next: Ed25519PrivateKey | None = None
        self.handover: tuple[int, Handover] | None = None
        """The seq and hand-over of the last key rotation, carried by every signed head."""

    def hand_over(self, new: Ed25519PrivateKey) -> None:
        """Sign the next event with ``new``, handed over by the current key in its seal."""
        self._next = new

    def seal(self, seq: int, body: bytes) -> bytes:
        """The published body of event ``seq`` (the engine's ``body``); the head moves on."""
        unsigned, self.head = next_link(self.table, self.head, seq, body, self.id)
        handover = None
        if self._next is not None:
            pub = raw_public(self._next.public_key())
            handover = Handover(self.id, pub, self.key.sign(handover_bytes(self.table, seq, pub)))
            self.key, self._next = self._next, None
            self.id = key_id(self.key.public_key())
            self.handover = (seq, handover)
        signature = self.key.sign(self.head.hash)
        return body[:-1] + Seal(
            unsigned.prev, self.id, signature, unsigned.after, handover
        ).member()

    def signed_head(self) -> dict[str, object]:
        """The head, signed: for a journal file's header and the ``chain`` file."""
        signed = sign_head(self.key, self.table, self.head)
        if self.handover is not None:
            signed["handover"] = self.handover[1].as_json(self.handover[0])
        return signed


def sign_head(key: Ed25519PrivateKey, table: str, head: Head) -> dict[str, object]:
    """``{"seq", "hash", "key", "sig"}``: the chain's head signed by the table's key."""
    sig = key.sign(head_bytes(table, head))
    return {
        "seq": head.seq, "hash": head.hash.hex(), "key": key_id(key.public_key()),
        "sig": _b64(sig).decode(),
    }


def head_bytes(table: str, head: Head) -> bytes:
    """What a signed head signs."""
    return HEAD_TAG + table.encode() + b"\x00" + str(head.seq).encode() + b"\x00" + head.hash


def read_head(value: object) -> tuple[Head, str, bytes]:
    """A signed head as written by :func:`sign_head`: the head, the key id, the signature."""
    if not isinstance(value, Mapping):
        raise ChainError("the chain head is not an object")
    seq, digest, key, sig = (value.get(k) for k in ("seq", "hash", "key", "sig"))
    if not (isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0
            and isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)
            and isinstance(key, str) and re.fullmatch(r"[0-9a-f]{16}", key)
            and isinstance(sig, str) and re.fullmatch(r"[A-Za-z0-9_-]{86}", sig)):
        raise ChainError("the chain head lacks seq, hash, key or sig, or one is malformed")
    return Head(seq, bytes.fromhex(digest)), key, _unb64(sig)


# ---------------------------------------------------------------- the floor's keys


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


# ---------------------------------------------------------------- checking


@dataclass(frozen=True, slots=True)
class Break:
    """Where a table's chain breaks, and why."""

    table: str
    seq: int
    why: str

    def __str__(self) -> str:
        return f"table {self.table}, seq {self.seq}: {self.why}"


@dataclass(slots=True)
class Link:
    """One event as stored: its seq, the engine's body, its seal and any stored hash."""

    seq: int
    body: bytes
    seal: Seal | None
    stored_hash: bytes | None = None
    lost: tuple[int, int] | None = None
    """The seq range the event names as lost (a ``journal_damaged`` alarm), if any."""


def lost_range(body: Mapping[str, object]) -> tuple[int, int] | None:
    """The seq range a ``journal_damaged`` alarm's body names as lost, if it names one."""
    if body.get("type") != "alarm" or body.get("kind") != "journal_damaged":
        return None
    first, last = (body.get(name) for name in LOST_FIELDS)
    if isinstance(first, int) and isinstance(last, int) and 0 < first <= last:
        return first, last
    return None


class Checker:
    """Checks one table's events in seq order: each one follows the one before, signed."""

    def __init__(self, table: str, keys: Keys, *, kept: int = HASHES_KEPT) -> None:
        self.table = table
        self.keys = keys
        self.kept = kept
        self.head: Head | None = None
        self.events = 0
        self.starts = 0
        self.hashes: dict[int, bytes] = {}
        """Each checked event's hash, by seq (to check an ``after`` against)."""
        self.learned: dict[str, Ed25519PublicKey] = {}
        """Keys handed over by a known key of this table (key rotation)."""
        self.pending: tuple[int, int, int] | None = None
        """A jump not named yet: the first and last seq it skipped, and its event's seq."""

    def check(self, link: Link) -> Break | None:
        """The first thing wrong with this event, given those before; ``None``: intact."""
        seal = link.seal
        if seal is None:
            return self._break(link, "the event carries no chain member (unsigned)")
        if seal.handover is not None:
            try:
                public = verified_handover(seal.handover, self.table, link.seq, self.keys,
                                           self.learned)
            except ChainError as exc:
                return self._break(link, str(exc))
            if seal.handover.new_id != seal.key:
                return self._break(link, "a hand-over to another key than the one that signs")
            self.learned[seal.key] = public
        found = self.keys.find(seal.key)
        if found is None and seal.key in self.learned:
            found = (self.table, self.learned[seal.key])
        if found is None:
            return self._break(link, f"signed by key {seal.key}, which the floor does not know "
                                     f"for any table")
        owner, public = found
        if owner != self.table:
            return self._break(link, f"signed by key {seal.key}, which is table {owner}'s: "
                                     f"the record of another table")
        digest = event_hash(self.table, link.body, seal)
        if link.stored_hash is not None and link.stored_hash != digest:
            return self._break(link, "the stored hash is not the hash of the stored body")
        try:
            public.verify(seal.sig, digest)
        except InvalidSignature:
            return self._break(link, f"the signature does not verify under key {seal.key}: "
                                     "the body was changed after it was signed")
        problem = self._follows(link, seal)
        if problem is None and self.pending is not None:
            problem = self._named(link)
        if problem is not None:
            return self._break(link, problem)
        self.head = Head(link.seq, digest)
        self.hashes[link.seq] = digest
        if len(self.hashes) > self.kept:  # bounded: keep the newest half
            for old in sorted(self.hashes)[: self.kept // 2]:
                del self.hashes[old]
        self.events += 1
        return None

    def _follows(self, link: Link, seal: Seal) -> str | None:
        head = self.head
        if seal.after is not None:
            return self._after(link, seal.after, seal.prev)
        if head is None:  # the first event read: a start, or the first one kept
            if seal.prev == GENESIS:
                self.starts += 1
            return None if link.seq == 1 or seal.prev != GENESIS else (
                f"the chain starts again at seq {link.seq} (prev is zeros)")
        if link.seq != head.seq + 1:
            return (f"seq {head.seq + 1} to {link.seq - 1} missing: the record lacks "
                    f"{link.seq - head.seq - 1} event(s) the chain holds")
        if seal.prev != head.hash:
            return (f"prev is not the hash of seq {head.seq}: an event before it was changed, "
                    "or this one belongs to another chain (a fork)")
        return None

    def _after(self, link: Link, after: int, prev: bytes) -> str | None:
        """An event that follows ``after``, not seq - 1: the events between must be named.

        By this event, a ``journal_damaged`` alarm, or by one of the next
        :data:`NAMED_WITHIN` events (the engine may clear an earlier loss's alarm first).
        """
        if link.lost is not None and link.lost != (after + 1, link.seq - 1):
            return (f"it follows seq {after} but names seq {link.lost[0]} to {link.lost[1]} "
                    "as lost")
        if link.lost is None:
            if self.pending is not None:
                return self._unnamed(self.pending)
            self.pending = (after + 1, link.seq - 1, link.seq)
        known = self.hashes.get(after)
        if known is None and self.head is not None and after > 0:
            return f"it follows seq {after}, which the record does not hold"
        if known is not None and prev != known:
            return f"prev is not the hash of seq {after}, which it follows"
        return None

    def _named(self, link: Link) -> str | None:
        """A jump waits to be named: by this event, or too late now."""
        assert self.pending is not None
        first, last, jump = self.pending
        if link.lost == (first, last) and link.seq <= jump + NAMED_WITHIN:
            self.pending = None
            return None
        if link.seq > jump + NAMED_WITHIN:
            return self._unnamed(self.pending)
        return None

    def _unnamed(self, pending: tuple[int, int, int]) -> str:
        first, last, jump = pending
        self.pending = None
        return (f"seq {jump} follows seq {first - 1}, and no journal_damaged alarm among it "
                f"and the {NAMED_WITHIN} events after it names seq {first} to {last} as lost")

    def finish(self) -> str | None:
        """At the end of the record: a jump still waiting to be named is a break."""
        if self.pending is None:
            return None
        return self._unnamed(self.pending)

    def _break(self, link: Link, why: str) -> Break:
        return Break(self.table, link.seq, why)
