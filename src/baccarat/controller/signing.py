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

import base64
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from baccarat.chain import (
    ChainError,
    Handover,
    Head,
    Sealer,
    key_id,
    load_key,
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
HANDOVER_FILE: Final = "key-handover"
"""The last key hand-over, beside the journal: every signed head carries it."""


def _unb64_text(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError("not base64 text")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_path(configured: Path | None, state: Path) -> Path:
    """Where the table's key is: the configured file, else ``state/table.key``."""
    return configured if configured is not None else state / KEY_FILE


def next_key_path(path: Path) -> Path:
    """Where a new key waits to be handed over to (docs/record.md, "Rotating a key")."""
    return path.with_name(path.name + ".next")


def table_key(configured: Path | None, state: Path) -> Ed25519PrivateKey:
    """The table's key: the configured file, else ``state/table.key`` (made if missing).

    :class:`ChainError` for a key that cannot be used (wrong permissions, not a key).
    """
    path = key_path(configured, state)
    if configured is not None and not configured.exists():
        raise ChainError(f"key file {configured} (key_file in the configuration) does not exist")
    try:
        state.mkdir(parents=True, exist_ok=True)
        key, made = load_or_make(path)
    except (ChainError, OSError) as exc:
        if configured is not None or path.exists():
            raise ChainError(str(exc)) from None
        # none installed, and none can be made (a full or read-only disk, which stops the
        # journal too): this run signs with a key kept nowhere, and says so
        key = Ed25519PrivateKey.generate()
        public = key.public_key()
        log.error(  # noqa: TRY400 - the reason is the message; no traceback wanted
            "signing key: none was installed and none can be made in %s (%s): this "
                  "run signs with key %s (%s), kept nowhere", state, exc, key_id(public),
                  public_text(public))
        return key
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

    def __init__(
        self, key: Ed25519PrivateKey, table: str, folder: Path, key_file: Path | None = None
    ) -> None:
        self.key = key
        self.table = table
        self.sealer = Sealer(key, table)
        self.path = folder / CHAIN_FILE
        self.key_file = key_file
        self.handover_path = folder / HANDOVER_FILE
        self._rotating = False
        self._next: Ed25519PrivateKey | None = None
        self._persisted: tuple[int, Handover] | None = None
        self._load_handover()

    @property
    def public(self) -> str:
        """The public key, as ``baccarat identity`` prints it."""
        return public_text(self.sealer.key.public_key())

    def load_next(self) -> None:
        """A new key waits beside the key (``.next``): load it, to hand over after recovery.

        :class:`ChainError` if it cannot be used (the daemon does not start).
        """
        if self.key_file is None:
            return
        waiting = next_key_path(self.key_file)
        if not waiting.exists():
            return
        new = load_key(waiting)
        done = self._persisted
        if done is not None and done[1].new_id == key_id(new.public_key()):
            # handed over already, but the files could not be renamed (the configuration
            # directory is read-only to the service): sign with the new key, no new hand-over
            self.sealer.key, self.sealer.id, self.sealer.handover = new, done[1].new_id, done
            log.warning("signing key: %s took over at seq %d; rename it to %s (the old key "
                        "is no longer used)", waiting, done[0], self.key_file)
            return
        self._next = new

    def rotate_if_asked(self) -> None:
        """After recovery: a new key waits, so the next event hands over to it."""
        new, self._next = self._next, None
        if new is None or self.key_file is None:
            return
        waiting = next_key_path(self.key_file)
        self.sealer.hand_over(new)
        self._rotating = True
        log.warning("signing key: %s waits to take over from key %s; the next event hands "
                    "over to key %s", waiting, self.sealer.id, key_id(new.public_key()))

    def _rotated(self) -> None:
        """The hand-over event is sealed: keep the hand-over, put the new key in place."""
        self._rotating = False
        assert self.sealer.handover is not None
        assert self.key_file is not None
        seq, handover = self.sealer.handover
        self._persisted = self.sealer.handover
        try:
            replace_file(self.handover_path, json.dumps(handover.as_json(seq)) + "\n")
        except OSError as exc:
            log.error(  # noqa: TRY400 - the reason is the message; no traceback wanted
                "signing key: cannot write %s (%s): after a restart the signed heads will "
                "not carry the hand-over", self.handover_path, exc)
        old = self.key_file
        retired = old.with_name(f"{old.name}.retired-{handover.old}")
        try:
            old.rename(retired)
            next_key_path(old).rename(old)
            for suffix in (".pub",):
                waiting = next_key_path(old).with_name(next_key_path(old).name + suffix)
                if old.with_name(old.name + suffix).exists():
                    old.with_name(old.name + suffix).rename(retired.with_name(
                        retired.name + suffix))
                if waiting.exists():
                    waiting.rename(old.with_name(old.name + suffix))
        except OSError as exc:
            log.error(  # noqa: TRY400 - the reason is the message; no traceback wanted
                "signing key: handed over at seq %d, but the key files could not be "
                      "renamed (%s): rename %s to %s yourself", seq, exc, next_key_path(old), old)
            return
        log.warning("signing key: handed over from key %s to key %s at seq %d; the old key "
                    "is now %s", handover.old, handover.new_id, seq, retired)

    def _load_handover(self) -> None:
        """The last hand-over, which every signed head carries (a restart keeps it)."""
        try:
            value = json.loads(self.handover_path.read_text(encoding="utf-8"))
            handover = Handover(value["from"], _unb64_text(value["pub"]),
                                _unb64_text(value["sig"]))
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("cannot read %s (%s): signed heads will not carry the last key "
                        "hand-over", self.handover_path, exc)
            return
        self._persisted = (int(value["seq"]), handover)
        if handover.new_id == self.sealer.id:
            self.sealer.handover = self._persisted

    def start_from(self, header: Header | None) -> None:
        """Take the head a journal file's header carries (none: a chain that starts)."""
        self.sealer.head = header_head(header, self.table)

    def payload(self, message: Message) -> bytes:
        """The published body of an engine message: its body with the chain member."""
        sealed = self.sealer.seal(message.seq, message.to_bytes())
        if self._rotating:
            self._rotated()
        return sealed

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
