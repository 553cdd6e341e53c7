"""A sequence number is a promise: a ``seq`` once made is never made again with another body.

The journal is the record of the table's inputs, and a restart numbers its messages on
from the journal's tail. A journal that lost records whose messages were already made
(storage that acknowledged a flush and lost it; a torn tail cut at a start; ext4 after an
I/O error and ``e2fsck``) would number new messages with ``seq`` numbers that subscribers
have already seen: they drop the new bodies as duplicates, and the results vanish. So the
daemon keeps evidence of how far it numbered outside the journal, and compares:

* ``seq-mark`` beside the journal: the highest ``seq`` of the messages put in the outbox,
  written and fdatasync'd before they are (:class:`SeqMark`; one flush per input that
  makes messages, none for one that makes none);
* ``published``: the cursor of the last message the broker acknowledged (a hint, written
  every 2 s without fsync; :mod:`~baccarat.controller.positions`);
* the broker: the highest ``seq`` among the messages it holds retained for the table
  (:func:`retained_seq`, when it answers at the start).

Where one says more than the journal replays to, the difference is lost
(:func:`lost_range`): the table journals a
:class:`~baccarat.controller.engine.inputs.JournalLost` input, its engine numbers on past
the range and raises a lasting ``journal_damaged`` alarm naming it (docs/record.md,
"Sequence numbers").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from baccarat.controller.config import BrokerConfig
from baccarat.errors import BaccaratError
from baccarat.mqtt import MqttClient, MqttError

log = logging.getLogger("baccarat.daemon")

MARK_FILE: Final = "seq-mark"
SLOT: Final = 32
"""Bytes of each of the file's two slots: ``<seq, 20 digits> <crc32, 8 hex digits>``."""
MAX_SEQ: Final = 2**53 - 1
"""The largest ``seq`` believed (a JSON number a subscriber in JavaScript reads exactly)."""
PROBE_TIMEOUT: Final = 3.0
"""Seconds a start waits, at most, for the broker's retained messages of the table."""
PROBE_QUIET: Final = 0.3
"""Seconds without a new retained message after which the broker has given them all."""
RETAINED_TOPICS: Final = ("round", "shoe", "alarms", "roads", "recall")
"""The engine's retained topics: each message on them carries a ``seq``."""


class SeqMarkError(BaccaratError, OSError):
    """``seq-mark`` cannot be written: the table cannot keep its promise, it stops."""


class SeqMark:
    """The highest ``seq`` put in the outbox, durable: two slots, each with its CRC.

    Each write goes to the slot that does not hold the newest value, in place, and is
    fdatasync'd: a write torn by a power cut spoils that slot only, and the other still
    holds the value before it. :meth:`read` takes the highest slot whose CRC is right.
    """

    def __init__(self, folder: Path, *, fsync: bool = True) -> None:
        self.path = Path(folder) / MARK_FILE
        self.fsync = fsync
        self._fd: int | None = None
        self._slot = 0
        self.value: int | None = None
        """The highest ``seq`` the file holds (``None``: no file yet)."""
        self.writes = 0

    def open(self) -> int | None:
        """Read the file (creating it if missing); the ``seq`` it holds (``None``: none)."""
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        if created and self.fsync:  # the new name must survive a power cut too
            folder = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        data = os.pread(self._fd, 2 * SLOT, 0)
        slots = [_slot_value(data[i * SLOT : (i + 1) * SLOT]) for i in (0, 1)]
        good = [(v, i) for i, v in enumerate(slots) if v is not None]
        if data and not good:
            log.warning("%s holds no valid seq (%d bytes): ignored", self.path, len(data))
        if good:
            self.value, newest = max(good)
            self._slot = 1 - newest
        return self.value

    def ensure(self, seq: int) -> None:
        """Make the file say at least ``seq``, durably; :class:`SeqMarkError` if it cannot."""
        if self.value is not None and seq <= self.value:
            return
        if self._fd is None:
            raise RuntimeError("the seq mark is not open")
        body = f"{seq:020d}".encode()
        slot = b"%s %08x\n" % (body, zlib.crc32(body))
        slot += b" " * (SLOT - len(slot))
        try:
            os.pwrite(self._fd, slot, self._slot * SLOT)
            if self.fsync:
                os.fdatasync(self._fd)
        except OSError as exc:
            why = f"cannot write {self.path}: {exc.strerror or exc}"
            raise SeqMarkError(exc.errno, why) from exc
        self.value = seq
        self._slot = 1 - self._slot
        self.writes += 1

    def close(self) -> None:
        """Close the file; closing twice is harmless."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _slot_value(slot: bytes) -> int | None:
    """The ``seq`` of one slot, ``None`` if it is empty or torn (its CRC is wrong)."""
    body, _, rest = slot.partition(b" ")
    crc = rest[:8]
    if len(body) != 20 or not body.isdigit() or len(crc) != 8:
        return None
    try:
        if int(crc, 16) != zlib.crc32(body):
            return None
    except ValueError:
        return None
    value = int(body)
    return value if value <= MAX_SEQ else None


@dataclass(frozen=True, slots=True)
class Loss:
    """Messages ``first`` to ``last`` were made from inputs the journal no longer holds."""

    first: int
    last: int
    evidence: tuple[str, ...]
    """What showed it: ``seq-mark``, ``cursor``, ``broker`` (those ahead of the journal)."""

    @property
    def count(self) -> int:
        """How many messages."""
        return self.last - self.first + 1

    def describe(self, *, marked: int | None, cursor: int | None, broker: int | None) -> str:
        """The log's words for it, with the evidence that showed it."""
        shown = ", ".join(
            f"{name} {value}" for name, value in
            (("seq-mark", marked), ("cursor", cursor), ("broker", broker))
            if name in self.evidence
        )
        return (
            f"it replays to seq {self.first - 1}, but {shown}: the inputs of {self.count}"
            f" message(s), seq {self.first} to {self.last}, are lost; numbering goes on at"
            f" seq {self.last + 1}"
        )


def lost_range(
    made: int, *, marked: int | None, cursor: int | None, broker: int | None
) -> Loss | None:
    """Compare the journal (``made``: its replay's last ``seq``) with everything else.

    ``marked``: ``seq-mark``; ``cursor``: the ``published`` cursor (0: none);
    ``broker``: the highest retained ``seq`` the broker holds for the table (``None``: it
    did not answer). ``None`` when none is ahead of the journal.
    """
    evidence = {"seq-mark": marked, "cursor": cursor, "broker": broker}
    ahead = {name: seq for name, seq in evidence.items() if seq is not None and seq > made}
    if not ahead:
        return None
    return Loss(made + 1, max(ahead.values()), tuple(ahead))


async def retained_seq(
    broker: BrokerConfig, client: MqttClient, topic_base: str, *,
    within: float = PROBE_TIMEOUT,
) -> int | None:
    """The highest ``seq`` the broker holds retained on the table's engine topics.

    ``client``: a connection not yet made, built like the publisher's (no will). ``None``
    if the broker cannot be reached ``within`` seconds. Bodies are read as hostile: one
    that is not a JSON object with a whole ``seq`` in range is skipped (and logged).
    """
    highest: int | None = None
    try:
        async with asyncio.timeout(within):
            async with client:
                topics = [f"{topic_base}/{topic}" for topic in RETAINED_TOPICS]
                await client.subscribe(*topics, qos=1)
                highest = 0
                seen: set[str] = set()
                messages = client.messages()
                while len(seen) < len(topics):
                    try:
                        async with asyncio.timeout(PROBE_QUIET):
                            message = await anext(messages)
                    except TimeoutError:
                        break  # a topic with nothing retained sends nothing
                    if not message.retain or message.topic not in topics:
                        continue
                    seen.add(message.topic)
                    seq = _body_seq(message.payload)
                    if seq is None:
                        log.warning("broker %s:%d: the retained %s holds no seq: not used",
                                    broker.host, broker.port, message.topic)
                        continue
                    highest = max(highest, seq)
    except (TimeoutError, MqttError, OSError) as exc:
        reason = str(exc) or "no answer"
        log.warning("broker %s:%d: its retained messages cannot be read at the start "
                    "(%s): the journal is compared with seq-mark and the cursor only",
                    broker.host, broker.port, reason)
        return None
    log.info("broker %s:%d: the table's retained messages go up to seq %d",
             broker.host, broker.port, highest)
    return highest


def _body_seq(payload: bytes) -> int | None:
    """The ``seq`` of a retained body, if it is a JSON object with one in range."""
    if not payload or len(payload) > 1 << 20:
        return None
    with contextlib.suppress(ValueError, RecursionError):
        body = json.loads(payload)
        seq = body.get("seq") if isinstance(body, dict) else None
        if isinstance(seq, int) and not isinstance(seq, bool) and 0 < seq <= MAX_SEQ:
            return seq
    return None
