"""The table's chain and signatures: every event hashed onto the one before and signed.

docs/record.md, "The chain and the signatures", is the design; this package is all of its
cryptography, shared by the daemon (which seals), the recorder (which checks as it
stores) and ``baccarat verify`` (which checks offline). Ed25519 and SHA-256 come from
``cryptography``; nothing here is home-made but the layout of the bytes signed.

Three modules: :mod:`baccarat.chain.keys` (the table's key, a key's id and text, the floor's
keys file), :mod:`baccarat.chain.link` (the chain member of a published body, an event's
hash and signature, the sealer, signed heads and hand-overs) and :mod:`baccarat.chain.check`
(the checker the recorder and ``baccarat verify`` share). Their names are this package's:
``from baccarat.chain import split``.
"""

from __future__ import annotations

from baccarat.chain.check import (
    HASHES_KEPT,
    LOST_FIELDS,
    NAMED_WITHIN,
    Break,
    Checker,
    Link,
    lost_range,
)
from baccarat.chain.keys import (
    PUBLIC_PREFIX,
    ChainError,
    Keys,
    check_permissions,
    key_id,
    keys_from,
    load_key,
    load_or_make,
    make_key,
    parse_public,
    public_text,
    raw_public,
    read_keys,
)
from baccarat.chain.link import (
    GENESIS,
    HANDOVER_TAG,
    HEAD_TAG,
    LINK_TAG,
    MEMBER_MAX,
    Handover,
    Head,
    Seal,
    Sealer,
    check_head,
    event_hash,
    handover_bytes,
    head_bytes,
    link_bytes,
    next_link,
    read_head,
    sign_head,
    split,
    verified_handover,
)

__all__ = [
    "GENESIS",
    "HANDOVER_TAG",
    "HASHES_KEPT",
    "HEAD_TAG",
    "LINK_TAG",
    "LOST_FIELDS",
    "MEMBER_MAX",
    "NAMED_WITHIN",
    "PUBLIC_PREFIX",
    "Break",
    "ChainError",
    "Checker",
    "Handover",
    "Head",
    "Keys",
    "Link",
    "Seal",
    "Sealer",
    "check_head",
    "check_permissions",
    "event_hash",
    "handover_bytes",
    "head_bytes",
    "key_id",
    "keys_from",
    "link_bytes",
    "load_key",
    "load_or_make",
    "lost_range",
    "make_key",
    "next_link",
    "parse_public",
    "public_text",
    "raw_public",
    "read_head",
    "read_keys",
    "sign_head",
    "split",
    "verified_handover",
]
