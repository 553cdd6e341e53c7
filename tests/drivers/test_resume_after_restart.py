"""A host that restarted does not take the frames it had recorded a second time."""

from __future__ import annotations

from pathlib import Path

from baccarat.cards import parse_card
from baccarat.controller.engine.inputs import DrawCard
from baccarat.controller.journal.writer import Journal
from baccarat.drivers.events import CardDrawn, Heartbeat
from baccarat.drivers.framed import FramedDecoder, FramedEncoder, ack_frame


def test_resumed_decoder_drops_and_acknowledges_what_was_recorded() -> None:
    encoder = FramedEncoder(first_seq=3)
    frames = [encoder.encode(CardDrawn(parse_card(c))) for c in ("AS", "2S", "3S", "4S")]
    decoder = FramedDecoder()
    decoder.resume_after(5)  # frames 3, 4 and 5 were journaled before the crash
    events = decoder.feed(b"".join(frames))
    assert events == [CardDrawn(parse_card("4S"), seq=6)]
    assert decoder.counters["duplicates"] == 3
    assert decoder.pending_output() == ack_frame(6)


def test_resume_wraps_around_255() -> None:
    encoder = FramedEncoder(first_seq=254)
    frames = [encoder.encode(CardDrawn(parse_card(c))) for c in ("AS", "2S", "3S")]
    decoder = FramedDecoder()
    decoder.resume_after(255)
    assert decoder.feed(b"".join(frames)) == [CardDrawn(parse_card("3S"), seq=0)]


def test_a_device_that_resumes_further_ahead_is_followed_once_it_repeats_itself() -> None:
    """The device resumes past a frame the host acknowledged and did not record.

    Frame 4 (a heartbeat) was acknowledged before the host stopped: the device resumes with
    frame 5, which the host takes when it comes a second time.
    """
    encoder = FramedEncoder(first_seq=3)
    card, heartbeat, next_card = (
        encoder.encode(CardDrawn(parse_card("AS"))),
        encoder.encode(Heartbeat()),
        encoder.encode(CardDrawn(parse_card("2S"))),
    )
    assert heartbeat
    decoder = FramedDecoder()
    decoder.resume_after(3)
    assert decoder.feed(card) == []  # recorded: a duplicate
    assert decoder.pending_output() == ack_frame(3)
    assert decoder.feed(next_card) == []  # ahead: held until it comes again
    assert decoder.pending_output() == ack_frame(3)  # nothing beyond what was recorded
    assert decoder.feed(next_card) == [CardDrawn(parse_card("2S"), seq=5)]
    assert decoder.pending_output() == ack_frame(5)


def test_resuming_starts_at_the_earliest_frame_the_device_repeats() -> None:
    """The host opened its port in the middle of the device's retransmission.

    The device repeats frames 6, 7 and 8: the host sees 7 and 8 first, then every round.
    """
    encoder = FramedEncoder(first_seq=6)
    frames = [encoder.encode(CardDrawn(parse_card(c))) for c in ("3S", "4S", "5S")]
    decoder = FramedDecoder()
    decoder.resume_after(4)  # 5 was a heartbeat the host acknowledged
    assert decoder.feed(frames[1] + frames[2]) == []
    assert decoder.feed(b"".join(frames)) == []  # 6 is the earliest: it must come again
    events = decoder.feed(b"".join(frames))
    assert [e.seq for e in events] == [6, 7, 8]


def test_after_a_resume_the_next_frame_is_taken_at_once() -> None:
    encoder = FramedEncoder(first_seq=10)
    decoder = FramedDecoder()
    decoder.resume_after(9)
    assert decoder.feed(encoder.encode(CardDrawn(parse_card("9H")))) == [
        CardDrawn(parse_card("9H"), seq=10)
    ]


def test_journal_keeps_the_device_frame_number(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.open()
    journal.append(DrawCard(parse_card("AS"), ts=1.5, device_seq=17))
    journal.append(DrawCard(parse_card("2S"), ts=2.5))
    journal.close()
    text = next(tmp_path.glob("shoe-*.journal")).read_text()
    assert " 1.500000/17 AS *" in text
    again = Journal(tmp_path)
    recovery = again.open()
    again.close()
    assert recovery.last_device_seq == 17
    assert [i.device_seq for i in recovery.inputs] == [17, None]
    assert recovery.inputs[0] == DrawCard(parse_card("AS"), ts=1.5)  # not part of equality
