"""What a restart publishes again: every message the broker had not acknowledged.

The ``published`` cursor beside the journal holds the ``seq`` of the last message the
broker acknowledged. The messages after it may come from inputs in files older than the
newest (a shoe changed while the broker was away), so those files are replayed too. Each
file's header holds the engine's counters at its start: each older file is replayed by
itself, from its header, with the profile its header recorded, which gives the same
messages with the same ``seq`` as when they were first made (docs/design.md, invariant 1).

Messages that cannot be made again (their file deleted by retention, unreadable, or cut at
a bad record) leave a :class:`Gap` in the ``seq`` numbers, which the table raises as an
alarm naming the numbers and the reason: never silence.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from baccarat.controller.engine.engine import Engine
from baccarat.controller.journal.reader import JournalFile, backlog, header_profile
from baccarat.controller.journal.records import Header
from baccarat.messages.bodies import Message
from baccarat.rules.profiles import Profile

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Gap:
    """Messages ``first`` to ``last`` the broker never acknowledged and no replay can make."""

    first: int
    last: int
    reason: str

    def __str__(self) -> str:
        """One line for the alarm and the log."""
        return (
            f"messages {self.first} to {self.last} were not acknowledged by the broker and "
            f"cannot be published again: {self.reason}"
        )


@dataclass(frozen=True, slots=True)
class Older:
    """The messages after the cursor that older files give, and what stopped the replay."""

    messages: list[Message]
    files: list[Path]
    reasons: list[str]
    payloads: dict[int, bytes]
    """The published bodies of ``messages`` by seq, sealed from their file's chain head."""


Seal = Callable[[Header, list[Message]], dict[int, bytes]]
"""The published bodies of a file's messages, in order, sealed from its header's head."""


def older_messages(
    folder: Path, newest: Header | None, profile: Profile, published: int,
    seal: Seal | None = None,
) -> Older:
    """Replay the files before ``newest`` that hold inputs of messages after ``published``.

    ``seal`` gives the published bodies of each file's messages (the table's chain).
    """
    if newest is None:
        return Older([], [], [], {})
    found = backlog(folder, newest, published)
    messages: list[Message] = []
    payloads: dict[int, bytes] = {}
    reasons = [] if found.missing is None else [found.missing]
    for file, end in zip(found.files, found.ends, strict=True):
        made, reason = _replay(file, end, profile)
        if seal is not None and file.header is not None:
            payloads.update(
                (seq, body) for seq, body in seal(file.header, made).items() if seq > published
            )
        messages += [m for m in made if m.seq > published]
        if reason is not None:
            reasons.append(reason)
    return Older(messages, [file.path for file in found.files], reasons, payloads)


def _replay(
    file: JournalFile, end: dict[str, int], profile: Profile
) -> tuple[list[Message], str | None]:
    """The messages of one older file, at most up to ``end``; and what went wrong, if anything."""
    assert file.header is not None
    engine = Engine.resume(_profile(file.header, profile), file.header.counters)
    made: list[Message] = []
    for _, inp in file.records:
        made += engine.feed(inp).messages
    last = end.get("seq", 0)
    reason = None
    if file.problem is not None:
        reason = str(file.problem)
    elif engine.counters() != end:
        reason = (
            f"{file.path.name} replays to counters {engine.counters()}, "
            f"the next file's header says {end}"
        )
    return [m for m in made if m.seq <= last], reason


def _profile(header: Header, default: Profile) -> Profile:
    """The profile the file was written with, as its header records it; else ``default``."""
    if header.profile is None:
        return default
    try:
        return header_profile(header)
    except ValueError as exc:
        log.warning("journal file %d: its header's profile is not valid (%s); using the "
                    "configured one", header.file, exc)
        return default


def gaps(messages: Sequence[Message], published: int, reasons: Sequence[str]) -> list[Gap]:
    """The runs of ``seq`` numbers after ``published`` missing from ``messages`` (in order)."""
    reason = "; ".join(reasons) or "the journal does not hold their inputs"
    found: list[Gap] = []
    expected = published + 1
    for message in messages:
        if message.seq > expected:
            found.append(Gap(expected, message.seq - 1, reason))
        expected = max(expected, message.seq + 1)
    return found

