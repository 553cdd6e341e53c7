"""The ``framed`` codec: frames between garbage, CRC, stuffing, sequence, acknowledgements."""

from __future__ import annotations

import binascii
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from baccarat.cards import ALL_CARDS, parse_card
from baccarat.drivers import framed, framed_wire
from baccarat.drivers.codec import get_codec
from baccarat.drivers.events import (
    BUTTONS,
    CardDrawn,
    CutCard,
    DealerButton,
    DeviceEvent,
    DeviceFault,
    Heartbeat,
    Hello,
    Rejected,
    ShoeInserted,
    ShoeRemoved,
    ShuffleDone,
    ShuffleStarted,
    UnreadableCard,
)
from baccarat.drivers.framed import FramedDecoder, FramedEncoder
from baccarat.drivers.framed_wire import ACK, ack_frame, crc16, encode_frame, stuff, unstuff

device_events = st.one_of(
    st.builds(CardDrawn, st.sampled_from(ALL_CARDS)),
    st.builds(UnreadableCard, st.binary(max_size=framed_wire.MAX_PAYLOAD)),
    st.sampled_from([CutCard(), ShoeInserted(), ShoeRemoved(), ShuffleStarted(), ShuffleDone()]),
    st.sampled_from([Heartbeat()]),
    st.builds(DealerButton, st.sampled_from(BUTTONS)),
    st.builds(
        DeviceFault,
        st.integers(0, 0xFFFF),
        st.text(max_size=20).filter(lambda t: len(t.encode()) <= 62),
    ),
)


def with_seq(event: DeviceEvent, seq: int) -> DeviceEvent:
    fields = {f: getattr(event, f) for f in event.__dataclass_fields__ if f != "seq"}
    return type(event)(**fields, seq=seq)


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def test_crc_is_ccitt_false_with_a_zero_residue() -> None:
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"123456789") == binascii.crc_hqx(b"123456789", 0xFFFF)
    body = b"\x02\x05\x10\x01S"
    assert binascii.crc_hqx(body + crc16(body).to_bytes(2, "big"), 0xFFFF) == 0


def test_worked_examples_of_protocol_md() -> None:
    def wire(text: str) -> bytes:
        return bytes.fromhex(text)

    ace_of_spades = bytes((1, ord("S")))
    assert encode_frame(5, framed_wire.CARD, ace_of_spades) == wire("7E 02 05 10 01 53 F3 0E 7E")
    assert ack_frame(5) == wire("7E 00 05 02 13 2B 7E")
    king_of_hearts = bytes((13, ord("H")))
    card = framed_wire.CARD
    assert encode_frame(0x7E, card, king_of_hearts) == wire("7E 02 7D 5E 10 0D 48 49 53 7E")
    assert encode_frame(0x33, card, ace_of_spades) == wire("7E 02 33 10 01 53 F8 7D 5E 7E")
    hello = encode_frame(0, framed_wire.HELLO, framed_wire.hello_payload(0x1234))
    assert hello == wire("7E 03 00 01 02 12 34 CB E2 7E")
    assert framed_wire.query_frame(0) == wire("7E 00 00 03 FC FF 7E")
    assert framed_wire.position_frame(0, 1, 3, 0x1234) == wire("7E 04 00 04 01 03 12 34 85 2C 7E")
    assert ack_frame(0) == wire("7E 00 00 02 EC DE 7E")
    assert encode_frame(1, framed_wire.SHOE_INSERTED) == wire("7E 00 01 20 DB CF 7E")
    assert encode_frame(2, framed_wire.CARD, ace_of_spades) == wire("7E 02 02 10 01 53 A2 23 7E")
    assert ack_frame(2) == wire("7E 00 02 02 8A BC 7E")


def test_the_exchange_of_protocol_md_delivers_each_event_once() -> None:
    decoder = FramedDecoder()
    inserted = bytes.fromhex("7E 00 01 20 DB CF 7E")
    card = bytes.fromhex("7E 02 02 10 01 53 A2 23 7E")
    events = decoder.feed(bytes.fromhex("7E 03 00 01 02 12 34 CB E2 7E"))
    assert decoder.pending_output() == ack_frame(0)
    events += decoder.feed(inserted + card)
    assert decoder.pending_output() == ack_frame(2)
    events += decoder.feed(inserted + card)  # retransmitted: the ACK was lost
    assert decoder.pending_output() == ack_frame(2)
    assert events == [Hello(2, seq=0), ShoeInserted(seq=1), CardDrawn(parse_card("AS"), seq=2)]
    assert {e.session for e in events} == {0x1234}
    assert decoder.counters["duplicates"] == 2


def test_stuffing_round_trips_and_hides_flags() -> None:
    raw = bytes(range(256)) * 2
    stuffed = stuff(raw)
    assert b"\x7e" not in stuffed
    assert unstuff(stuffed) == raw
    assert unstuff(b"\x7d\x41") is None
    assert unstuff(b"ab\x7d") is None


def test_every_event_round_trips_with_its_sequence_number() -> None:
    events: list[DeviceEvent] = [CardDrawn(card) for card in ALL_CARDS]
    events += [CutCard(), ShoeInserted(), ShoeRemoved(), ShuffleStarted(), ShuffleDone()]
    events += [DealerButton(b) for b in BUTTONS] + [Heartbeat(), UnreadableCard(b"\x7e\x7d")]
    events += [DeviceFault(513, "card jam ✋")]
    encoder, decoder = FramedEncoder(), FramedDecoder(expected=0)
    stream = b"".join(encoder.encode(e) for e in events)
    assert decoder.feed(stream) == [with_seq(e, i % 256) for i, e in enumerate(events)]
    assert decoder.counters["rejected_bytes"] == 0
    assert decoder.pending_output() == ack_frame(len(events) - 1)
    assert decoder.pending_output() == b""


def test_crc_error_names_expected_and_received_values() -> None:
    frame = bytearray(encode_frame(7, framed_wire.CARD, b"\x0d\x48"))
    frame[4] ^= 0x01  # rank 13 -> 12
    events = FramedDecoder().feed(bytes(frame))
    assert len(events) == 1
    assert isinstance(events[0], Rejected)
    good = crc16(bytes(frame[1:5]) + b"\x48")
    assert f"expected 0x{good:04X}" in events[0].reason
    assert f"received 0x{int.from_bytes(frame[6:8], 'big'):04X}" in events[0].reason


def test_duplicates_are_dropped_and_acknowledged_again() -> None:
    encoder, decoder = FramedEncoder(), FramedDecoder(expected=0)
    frames = [encoder.encode(CardDrawn(c)) for c in ALL_CARDS[:3]]
    assert len(decoder.feed(frames[0] + frames[1])) == 2
    assert decoder.pending_output() == ack_frame(1)
    assert decoder.feed(frames[1]) == []  # retransmitted: the ACK was lost
    assert decoder.pending_output() == ack_frame(1)
    assert decoder.feed(frames[2]) == [CardDrawn(ALL_CARDS[2], seq=2)]
    assert decoder.counters["duplicates"] == 1


def test_a_gap_is_not_delivered_until_the_missing_frame_comes() -> None:
    encoder, decoder = FramedEncoder(), FramedDecoder(expected=0)
    frames = [encoder.encode(CardDrawn(c)) for c in ALL_CARDS[:3]]
    decoder.feed(frames[0])
    assert decoder.feed(frames[2]) == []
    assert decoder.pending_output() == ack_frame(0)
    assert decoder.counters["out_of_order"] == 1
    assert len(decoder.feed(frames[1] + frames[2])) == 2


def test_hello_with_a_new_session_resets_the_sequence() -> None:
    decoder = FramedDecoder()
    first = FramedEncoder()
    decoder.feed(first.hello(1) + first.encode(CutCard()) + first.encode(CutCard()))
    again = FramedEncoder()  # device restarted: sequence numbers start over
    events = decoder.feed(again.hello(2) + again.encode(ShoeInserted()))
    assert events == [Hello(2, seq=0), ShoeInserted(seq=1)]
    assert [e.session for e in events] == [2, 2]
    # a retransmitted HELLO of the same session is a duplicate, not a reset
    assert decoder.feed(encode_frame(0, framed_wire.HELLO, framed_wire.hello_payload(2))) == []
    assert decoder.counters["hellos"] == 2


def test_bad_payloads_are_reported_but_acknowledged() -> None:
    decoder = FramedDecoder(expected=0)
    events = decoder.feed(
        encode_frame(0, framed_wire.CARD, b"\x0e\x53")
        + encode_frame(1, framed_wire.BUTTON, b"\x09")
        + encode_frame(2, 0x99, b"x")
        + encode_frame(3, framed_wire.CUT_CARD, b"x")
    )
    assert events[0] == UnreadableCard(b"\x0e\x53", seq=0)
    assert [type(e) for e in events[1:]] == [Rejected, Rejected, Rejected]
    assert "unknown frame type 0x99" in events[2].reason  # type: ignore[attr-defined]
    assert decoder.pending_output() == ack_frame(3)


def test_registry_gives_both_sides() -> None:
    codec = get_codec("framed")
    assert codec.heartbeat_timeout == framed.HEARTBEAT_TIMEOUT
    frame = codec.encoder().encode(CardDrawn(parse_card("KD")))
    decoder = codec.decoder()
    assert decoder.feed(frame) == []  # a fresh host first asks where the device stands
    assert decoder.pending_output() == framed_wire.query_frame(0)
    answer = framed_wire.position_frame(0, oldest=0, next_seq=1, session=7)
    assert decoder.feed(answer) == [CardDrawn(parse_card("KD"), seq=0)]
    assert decoder.pending_output() == ack_frame(0)


@given(st.binary(max_size=3000), st.lists(st.integers(min_value=0), max_size=30))
def test_arbitrary_bytes_in_arbitrary_chunks_never_raise(data: bytes, cuts: list[int]) -> None:
    decoder = FramedDecoder()
    for chunk in chunked(data, cuts):
        decoder.feed(chunk)
        decoder.pending_output()
    decoder.resync()
    counters = decoder.counters
    assert counters["bytes_in"] == len(data)
    assert counters["rejected_bytes"] <= len(data)


@settings(max_examples=300)
@given(
    st.lists(st.tuples(device_events, st.binary(max_size=40)), max_size=40),
    st.binary(max_size=40),
    st.lists(st.integers(min_value=0), max_size=40),
)
def test_every_frame_between_garbage_is_recovered_exactly_once(
    pairs: list[tuple[DeviceEvent, bytes]], lead: bytes, cuts: list[int]
) -> None:
    encoder = FramedEncoder()
    stream = lead + b"".join(encoder.encode(event) + garbage for event, garbage in pairs)
    decoder = FramedDecoder(expected=0)
    events: list[DeviceEvent] = []
    for chunk in chunked(stream, cuts):
        events += decoder.feed(chunk)
    events += decoder.resync()
    delivered = [e for e in events if not isinstance(e, Rejected)]
    assert delivered == [with_seq(event, i) for i, (event, _) in enumerate(pairs)]
    garbage_bytes = len(lead) + sum(len(g) for _, g in pairs)
    assert decoder.counters["rejected_bytes"] == garbage_bytes
    rejected_sample = sum(len(e.data) for e in events if isinstance(e, Rejected))
    assert rejected_sample <= garbage_bytes


def test_ack_frame_layout() -> None:
    assert ack_frame(0x7E)[1:4] == b"\x00\x7d\x5e"  # the sequence byte 0x7E is stuffed
    assert unstuff(ack_frame(3)[1:-1])[2] == ACK  # type: ignore[index]
