"""A host that restarted does not take the frames it had recorded a second time."""

from __future__ import annotations

from pathlib import Path

from baccarat.cards import parse_card
from baccarat.controller.engine.inputs import DrawCard
from baccarat.controller.journal.writer import Journal
from baccarat.drivers.events import CardDrawn
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
