"""The daemon's side of the chain: its key, and the sealer that signs every event it publishes.

docs/record.md, "The chain and the signatures". The engine's bodies are not touched: the
chain member is added as a message is queued (:meth:`TableChain.payload`), so that
``baccarat replay`` still prints what the engine made and a verifier that strips the
member gets it back byte for byte.

The chain's state is the head, the hash of the newest event. Each journal file's header
carries the head before the file's first record, signed; a replay of the file from its
header (recovery, ``baccarat verify --journal``) seals the same events again (Ed25519 is
deterministic). ``chain`` beside the journal holds the newest head, signed, written with
the ``published`` cursor: it covers the newest file's records, which no later header does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from baccarat.chain import (
    ChainError,
    Head,
    Sealer,
    key_id,
    load_or_make,
    public_text,
    read_head,
)
from baccarat.controller.journal.records import Header
from baccarat.controller.positions import replace_file
from baccarat.messages.bodies import Message

log = logging.getLogger("baccarat.daemon")

KEY_FILE: Final = "table.key"
"""The key a daemon makes in its state directory (the journal's folder) when none is set."""
CHAIN_FILE: Final = "chain"
"""The newest chain head, signed, beside the journal."""


def table_key(configured: Path | None, state: Path) -> Ed25519PrivateKey:
    """The table's key: the configured file, else ``state/table.key`` (made if missing).

    :class:`ChainError` for a key that cannot be used (wrong permissions, not a key).
    """
    path = configured if configured is not None else state / KEY_FILE
    if configured is not None and not configured.exists():
        raise ChainError(f"key file {configured} (key_file in the configuration) does not exist")
    state.mkdir(parents=True, exist_ok=True)
    key, made = load_or_make(path)
    public = key.public_key()
    if made:
        log.warning("signing key: none was installed; made %s (key %s, %s): the floor "
                    "must learn this public key to check this table's record",
                    path, key_id(public), public_text(public))
    else:
        log.info("signing key: %s (key %s, %s)", path, key_id(public), public_text(public))
    return key


class TableChain:
    """The table's sealer, and the head of each journal file and of the ``chain`` file."""

    def __init__(self, key: Ed25519PrivateKey, table: str, folder: Path) -> None:
        self.key = key
        self.table = table
        self.sealer = Sealer(key, table)
        self.path = folder / CHAIN_FILE

    @property
    def public(self) -> str:
        """The public key, as ``baccarat identity`` prints it."""
        return public_text(self.key.public_key())

    def start_from(self, header: Header | None) -> None:
        """Take the head a journal file's header carries (none: a chain that starts)."""
        self.sealer.head = header_head(header, self.table)

    def payload(self, message: Message) -> bytes:
        """The published body of an engine message: its body with the chain member."""
        return self.sealer.seal(message.seq, message.to_bytes())

    def advance(self, messages: Iterable[Message]) -> dict[int, bytes]:
        """Seal messages of a replay in order; their published bodies by seq."""
        return {message.seq: self.payload(message) for message in messages}

    def replayed(self, header: Header, messages: list[Message]) -> dict[int, bytes]:
        """The published bodies of an older file's messages, sealed from its header's head.

        The live head is left as it was.
        """
        sealer = Sealer(self.key, self.table, header_head(header, self.table))
        return {m.seq: sealer.seal(m.seq, m.to_bytes()) for m in messages}

    def signed_head(self) -> dict[str, Any]:
        """The head now, signed (a new journal file's header)."""
        return self.sealer.signed_head()

    def write(self) -> None:
        """Write the signed head beside the journal (``OSError`` if it cannot)."""
        replace_file(self.path, json.dumps(self.signed_head(), separators=(",", ":")) + "\n")


def header_head(header: Header | None, table: str) -> Head:
    """The chain head a header carries; a chain start where it carries none."""
    if header is None:
        return Head()
    if header.chain is None:  # written before events were chained: the chain starts here
        return Head(header.counters.get("seq", 0))
    try:
        head, _, _ = read_head(header.chain)
    except ChainError as exc:
        log.error(  # noqa: TRY400 - the reason is the message; no traceback wanted
            "journal file %d: its chain head cannot be read (%s): the chain starts again "
            "here", header.file, exc)
        return Head()
    return head
