"""Where the device's sequence stands, while the host does not know (PROTOCOL.md 6.6, 6.7).

:class:`Placing` is what :class:`baccarat.drivers.framed.FramedDecoder` keeps while it asks
the device (or follows its retransmissions), and the functions here are the sequence
arithmetic modulo 256 it places by.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

log = logging.getLogger("baccarat.drivers.framed")  # the codec's log, as before the split

V1_SIGHTINGS: Final = 2
"""Times a version-1 device must repeat the first of its frames before the host goes on there."""
V1_PATIENCE: Final = 6
"""Times a version-1 device may repeat a run that starts before the frame recorded last,
without that frame (lost on the wire), before the host stops waiting for it."""


def behind(seq: int, reference: int) -> bool:
    """Whether ``seq`` comes before ``reference`` (up to 128 before it, modulo 256)."""
    return (seq - reference) & 0xFF >= 128


def unacknowledged(seq: int, oldest: int, next_seq: int) -> bool:
    """Whether ``seq`` is in the device's range of frames not acknowledged, oldest..next-1."""
    return (seq - oldest) & 0xFF < (next_seq - oldest) & 0xFF


def run_holds(held: dict[int, tuple[int, bytes]], start: int, seq: int) -> bool:
    """Whether the run of consecutive frames held from ``start`` includes frame ``seq``."""
    frame = start
    for _ in range(128):
        if frame not in held:
            return False
        if frame == seq:
            return True
        frame = (frame + 1) & 0xFF
    return False


def span(first: int, last: int) -> str:
    """Frames ``first`` to ``last`` (modulo 256), as a text."""
    count = (last - first) & 0xFF
    return f"frame {first}" if count == 0 else f"frames {first}..{last} ({count + 1})"


@dataclass(slots=True)
class Placing:
    """The host does not know where the device's sequence stands: it asks (6.6, 6.7).

    ``reason``: ``"start"`` (a host with no record), ``"restart"`` (the host recorded
    ``recorded`` last, a frame of the device's session ``session``, ``None`` if the record
    does not say), ``"stuck"`` (frames ahead of ``expected`` keep coming without it),
    ``"hello_again"`` (a HELLO of the device's session out of order: a repeat whose ACK
    was lost, or a power-up that reused the session; ``recorded`` is the frame taken last)
    or ``"replay"`` (a HELLO of an earlier session: ``replayed``).
    """

    reason: str
    recorded: int | None = None
    session: int | None = None
    expected: int | None = None
    journal_lost: bool = False
    """The host's journal lost records: frames acknowledged after ``recorded`` were lost."""
    first_query: int | None = None
    first_query_at: float = 0.0
    queries: int = 0
    held: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    sightings: Counter[int] = field(default_factory=Counter)
    replayed: int | None = None
    """A HELLO came of this session, one seen before and not the device's: asked, the device
    says whether it is in it (it powered up reusing it) or not (a replay)."""
    hello: int = 0
    """The sequence number of the HELLO that made the host ask (``hello_again``, ``replay``)."""
    window: tuple[int, int] | None = None
    """A replay confirmed: the device's own frames in flight (oldest, next), as it answered."""
    start: int = 0
    """A replay confirmed: the frame the host goes on at, once the replay has stopped."""
    ack: int | None = None
    quiet_since: float = 0.0

    def asked(self, nonce: int) -> bool:
        """Whether ``nonce`` is one of the queries sent since this placing began."""
        first = self.first_query
        return first is not None and (nonce - first) & 0xFF < self.queries


def by_retransmissions(placing: Placing) -> tuple[int, int | None, str | None] | None:
    """Where a device that does not answer (version 1) resumes: follow what it sends again.

    The device repeats its frames in flight oldest first, so the start of a run of
    frames seen at least :data:`V1_SIGHTINGS` times is where it resumes. A run that
    starts before the frame recorded last holds that frame too (the host's ACKs were
    lost): the host goes on after it once it has come (:data:`V1_PATIENCE`). When the
    start is not the frame expected, frames may have been lost.

    ``None``: not known yet. Else the frame to go on at, the frame recorded last that the
    device still has (to acknowledge) or ``None``, and why the frames from the one
    expected to the start were lost (a :class:`~baccarat.drivers.events.SequenceGap`) or
    ``None``.
    """
    held, sightings = placing.held, placing.sightings
    recorded, expected = placing.recorded, placing.expected
    if recorded is not None and recorded in held and sightings[recorded] >= V1_SIGHTINGS:
        return (recorded + 1) & 0xFF, recorded, None
    starts = [s for s in held if (s - 1) & 0xFF not in held and sightings[s] >= V1_SIGHTINGS]
    if not starts:
        return None
    start = max(starts, key=lambda s: sightings[s])
    log.info("framed: no answer to QUERY: following the retransmissions from frame %d "
             "(a device of protocol version 1)", start)
    if recorded is not None and run_holds(held, start, recorded):
        # the device sends the frame recorded last in that run, which a lossy wire let
        # through fewer times: it still has it, and the frames before it are duplicates
        return (recorded + 1) & 0xFF, recorded, None
    if (
        recorded is not None and expected is not None and behind(start, expected)
        and sightings[start] < V1_PATIENCE
    ):
        return None  # it has the frame recorded last in flight too: that comes again
    lost = None
    if expected is not None and start != expected:
        lost = (
            "the device went on without them" if placing.reason == "stuck"
            else "acknowledged before the restart, and the journal lost the records "
            "that held them: inputs lost" if placing.journal_lost
            else "a device of protocol version 1 cannot say whether they were heartbeats"
        )
    return start, None, lost
