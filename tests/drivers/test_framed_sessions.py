"""Sessions remembered (PROTOCOL.md 6.4): a replayed session refused, a reused one named.

The host's decoder against the device's own code (:class:`FramedSender`), without I/O: a
link that carries each frame the device writes to the host and the host's answers back,
on a clock of the test's. A replay is an earlier session's frames as the wire carried
them, written again verbatim between the device's own.
"""

from __future__ import annotations

from collections.abc import Iterable

from baccarat.cards import ALL_CARDS as DECK
from baccarat.cards import Card
from baccarat.controller.journal.records import SESSIONS_KEPT as JOURNAL_SESSIONS_KEPT
from baccarat.drivers.events import (
    CardDrawn,
    DeviceEvent,
    Hello,
    SessionReplayed,
    SessionReused,
    ShoeInserted,
)
from baccarat.drivers.framed import FramedDecoder
from baccarat.drivers.framed_device import FramedSender
from baccarat.drivers.framed_sessions import SESSIONS_KEPT, SeenSessions

ALL_CARDS: list[Card] = list(DECK)
STEP = 0.01
"""Seconds of the test's clock per step of the link."""


class Link:
    """A device and the host's decoder joined by a wire, on one clock."""

    def __init__(self, host: FramedDecoder | None = None) -> None:
        self.now = 0.0
        self.host = host or FramedDecoder(clock=lambda: self.now)
        self.events: list[DeviceEvent] = []
        self.wire: list[bytes] = []  # every frame the device wrote, as a recording
        self.deaf = False  # the host's answers are lost
        self.latency = 0.0  # seconds the host's answers take to reach the device
        self._answers: list[tuple[float, bytes]] = []

    def run(self, device: FramedSender, seconds: float, inject: Iterable[bytes] = ()) -> None:
        """Carry frames both ways for ``seconds``; ``inject``: frames written in between."""
        extra = list(inject)
        end = self.now + seconds
        while self.now < end:
            self.now += STEP
            while self._answers and self._answers[0][0] <= self.now:
                device.receive(self._answers.pop(0)[1], self.now)
            frame = device.next_frame(self.now)
            if frame is not None:
                self.wire.append(frame)
                self._to_host(device, frame)
            if extra:
                self._to_host(device, extra.pop(0))

    def _to_host(self, device: FramedSender, data: bytes) -> None:
        self.events += self.host.feed(data)
        answer = self.host.pending_output()
        if answer and not self.deaf:
            self._answers.append((self.now + self.latency, answer))

    def cards(self) -> list[Card]:
        return [e.card for e in self.events if isinstance(e, CardDrawn)]

    def of(self, kind: type[DeviceEvent]) -> list[DeviceEvent]:
        return [e for e in self.events if isinstance(e, kind)]


def powered_up(session: int, cards: list[Card]) -> FramedSender:
    device = FramedSender(session=session)
    device.queue(ShoeInserted())
    for card in cards:
        device.queue(CardDrawn(card))
    return device


def test_a_replayed_session_is_refused_and_the_devices_cards_after_it_are_taken() -> None:
    """Issue 30, hole 2: an earlier session's frames sent verbatim after a new power-up.

    Taken as a new session, its 12 cards were journaled again and the device's next cards
    dropped as duplicates. Its HELLO is of a session the host has seen, the device answers
    in another: nothing of it is taken, and the device's own cards all are, once.
    """
    earlier_cards, cards = ALL_CARDS[:12], ALL_CARDS[20:28]
    link = Link()
    link.run(powered_up(0x0A0A, earlier_cards), 2.0)
    recording = list(link.wire)
    device = powered_up(0x0B0B, cards[:2])  # the device powers up again
    link.run(device, 2.0)
    for card in cards[2:]:
        device.queue(CardDrawn(card))
    link.run(device, 10.0, inject=recording)  # the replay, between the device's frames
    assert device.idle, "the device's frames were all acknowledged"
    assert link.cards() == earlier_cards + cards  # none twice, none lost
    (replay,) = link.of(SessionReplayed)
    assert isinstance(replay, SessionReplayed)
    assert replay.replayed == 0x0A0A
    assert "0x0a0a" in replay.detail
    assert "0x0b0b" in replay.detail
    assert link.of(SessionReused) == []
    assert link.host.counters["replays"] == 1
    assert link.host.counters["replayed_frames"] > 0


def test_a_replay_on_a_host_that_restarted_is_told_by_the_sessions_it_was_given() -> None:
    """A restarted host knows the sessions from its journal (``remember_sessions``)."""
    link = Link()
    link.run(powered_up(0x0A0A, ALL_CARDS[:6]), 2.0)
    recording = list(link.wire)
    device = powered_up(0x0B0B, ALL_CARDS[10:12])
    link.run(device, 2.0)
    taken = link.cards()
    restarted = Link(FramedDecoder(clock=lambda: restarted.now))
    restarted.now = link.now
    restarted.host.remember_sessions([0x0A0A, 0x0B0B])
    restarted.host.resume_after(device.oldest_unacknowledged - 1, 0x0B0B)
    device.queue(CardDrawn(ALL_CARDS[30]))
    restarted.run(device, 10.0, inject=recording)
    assert taken + restarted.cards() == ALL_CARDS[:6] + ALL_CARDS[10:12] + [ALL_CARDS[30]]
    assert [e.replayed for e in restarted.of(SessionReplayed)] == [0x0A0A]  # type: ignore[attr-defined]


def test_a_power_up_that_reuses_the_session_is_taken_and_named() -> None:
    """The device restarts with the session it was in: its frames were 'duplicates' (stall).

    The host asks: the device no longer has the frames taken, so it reset; its frames are a
    new power-up's, and an alarm names the reuse (not ``shoe_deaf``).
    """
    link = Link()
    link.run(powered_up(0x1234, ALL_CARDS[:5]), 2.0)
    again = powered_up(0x1234, ALL_CARDS[5:9])
    link.run(again, 5.0)
    assert again.idle, "the reset device's frames were acknowledged"
    assert link.cards() == ALL_CARDS[:9]
    (reused,) = link.of(SessionReused)
    assert isinstance(reused, SessionReused)
    assert reused.reused == 0x1234
    assert "reused its session id" in reused.detail
    assert len(link.of(Hello)) == 2
    assert link.of(SessionReplayed) == []


def test_a_hello_repeated_because_its_ack_was_lost_is_no_reuse() -> None:
    """The host's ACKs are lost: the device sends its HELLO again with its window."""
    link = Link()
    device = powered_up(0x2222, ALL_CARDS[:4])
    link.deaf = True
    link.run(device, 1.2)  # every frame sent twice at least
    link.deaf = False
    link.run(device, 3.0)
    assert device.idle
    assert link.cards() == ALL_CARDS[:4]
    assert link.of(SessionReused) == []
    assert link.of(SessionReplayed) == []
    assert len(link.of(Hello)) == 1


def test_a_shoe_deaf_from_its_power_up_still_counts_its_window_as_duplicates() -> None:
    """Its window holds the HELLO: the host asks, and counts the repeats as duplicates.

    ``shoe_deaf`` (controller/device_inputs.py) is raised on duplicates and nothing new.
    """
    link = Link()
    device = powered_up(0x4444, ALL_CARDS[:3])
    link.deaf = True
    link.run(device, 5.0)
    assert link.cards() == ALL_CARDS[:3]  # once each
    assert link.host.counters["duplicates"] >= 3 * 5  # the window, every 0.5 s
    assert link.of(SessionReused) == []
    link.deaf = False
    link.run(device, 4.0)
    assert device.idle
    assert link.cards() == ALL_CARDS[:3]


def test_a_hello_repeated_before_its_late_ack_came_is_no_reuse() -> None:
    """The ACK takes longer than the device's timeout: the HELLO comes again, then the ACK.

    Asked, the device no longer has the HELLO in flight: a late repeat, dropped.
    """
    link = Link()
    link.latency = 0.6
    device = powered_up(0x3333, ALL_CARDS[:4])
    link.run(device, 6.0)
    assert device.idle
    assert link.cards() == ALL_CARDS[:4]
    assert link.of(SessionReused) == []
    assert len(link.of(Hello)) == 1


def test_a_device_that_powers_up_in_an_older_session_is_taken_and_named() -> None:
    """A HELLO of a remembered session, the device answers in it: a power-up reusing it."""
    link = Link()
    link.host.remember_sessions([0x0005, 0x0006, 0x0007])
    device = powered_up(0x0005, ALL_CARDS[:3])
    link.run(device, 4.0)
    assert device.idle
    assert link.cards() == ALL_CARDS[:3]
    assert [e.reused for e in link.of(SessionReused)] == [0x0005]  # type: ignore[attr-defined]
    assert link.of(SessionReplayed) == []


def test_the_session_seen_last_is_not_a_reuse_on_a_host_without_a_frame_recorded() -> None:
    """The journal names the device's session, but no frame to resume after: no alarm."""
    link = Link()
    link.host.remember_sessions([0x0005, 0x0006])
    device = powered_up(0x0006, ALL_CARDS[:3])
    link.run(device, 4.0)
    assert link.cards() == ALL_CARDS[:3]
    assert link.of(SessionReused) == []
    assert link.of(SessionReplayed) == []


def test_the_sessions_kept_are_bounded_and_the_newest() -> None:
    seen = SeenSessions(limit=3)
    for session in (1, 2, 3, 1, 4):
        seen.add(session)
    assert seen.as_list() == [3, 1, 4]
    assert 2 not in seen
    assert seen.newest == 4
    assert SESSIONS_KEPT == JOURNAL_SESSIONS_KEPT  # what the journal carries, the host keeps
