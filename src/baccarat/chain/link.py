"""The link: an event's chain member, its hash and signature, the sealer, signed heads.

The layout of the bytes signed (:mod:`baccarat.chain` says the design): an event is an
engine message with a ``seq``. Its published body is the engine's body (what ``baccarat
replay`` prints, byte for byte) with one trailing member added::

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
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from baccarat.chain.keys import ChainError, Keys, key_id, raw_public

LINK_TAG: Final = b"baccarat-chain-1\x00"
"""The domain of an event's hash: no other bytes this package signs start with it."""
HEAD_TAG: Final = b"baccarat-head-1\x00"
"""The domain of a signed chain head (a journal file's header, the ``chain`` file)."""
HANDOVER_TAG: Final = b"baccarat-handover-1\x00"
"""The domain of a key hand-over: the old key signs the new one."""
GENESIS: Final = bytes(32)
"""``prev`` of a table's first event: no event before it."""

MEMBER_MAX: Final = 640
"""Bytes of the longest chain member (a hand-over's included, with room): :func:`split`
looks for it in a body's last ones only, whatever the body's length."""
_MEMBER: Final = re.compile(
    rb',"chain":\{(?:"after":(0|[1-9][0-9]{0,18}),)?'
    rb'(?:"handover":\{"from":"([0-9a-f]{16})","pub":"([A-Za-z0-9_-]{43})",'
    rb'"sig":"([A-Za-z0-9_-]{86})"\},)?"prev":"([0-9a-f]{64})",'
    rb'"key":"([0-9a-f]{16})","sig":"([A-Za-z0-9_-]{86})"\}\}\Z'
)


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
