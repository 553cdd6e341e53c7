"""The ``line`` codec: exact card codes in, everything else rejected and counted."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baccarat.cards import ALL_CARDS, parse_card
from baccarat.drivers.codec import NotCarriedError, get_codec
from baccarat.drivers.events import REJECTED_SAMPLE_MAX, CardDrawn, CutCard, Rejected
from baccarat.drivers.line import LINE_MAX, LineDecoder, LineEncoder


def feed_chunks(decoder: LineDecoder, data: bytes, cuts: list[int]) -> list[object]:
    events: list[object] = []
    start = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        events += decoder.feed(data[start:cut])
        start = max(start, cut)
    events += decoder.feed(data[start:])
    return events


def test_every_card_round_trips_with_both_line_endings() -> None:
    for ending in (b"\n", b"\r\n"):
        encoder, decoder = LineEncoder(ending), LineDecoder()
        stream = b"".join(encoder.encode(CardDrawn(card)) for card in ALL_CARDS)
        assert decoder.feed(stream) == [CardDrawn(card) for card in ALL_CARDS]
        assert decoder.counters["rejected_bytes"] == 0
        assert decoder.counters["frames_ok"] == 52


def test_shoe_codes_match_the_card_model() -> None:
    assert LineDecoder().feed(b"A01\r\nH12\nD10\n") == [
        CardDrawn(parse_card("AS")),
        CardDrawn(parse_card("QH")),
        CardDrawn(parse_card("TD")),
    ]


def test_anything_but_an_exact_code_is_rejected_with_its_bytes_and_a_reason() -> None:
    decoder = LineDecoder()
    events = decoder.feed(b"a01\nA14\nX05\nA01 \n\nA01\n")
    rejected = [e for e in events if isinstance(e, Rejected)]
    assert [r.data for r in rejected] == [b"a01\n", b"A14\n", b"X05\n", b"A01 \n", b"\n"]
    assert "out of range 01..13" in rejected[1].reason
    assert "unknown suit letter 'X'" in rejected[2].reason
    assert rejected[0].hex == "61 30 31 0a"
    assert events[-1] == CardDrawn(parse_card("AS"))
    assert decoder.rejected_bytes == 3 * 4 + 5 + 1


def test_an_overlong_line_is_reported_as_it_comes_and_never_buffered() -> None:
    decoder = LineDecoder()
    events = []
    for _ in range(1000):
        events += decoder.feed(b"Z" * 100)
        assert decoder.buffered <= LINE_MAX
    events += decoder.feed(b"ZZ\nH01\n")
    rejected = [e for e in events if isinstance(e, Rejected)]
    assert len(rejected) == 1001  # one a chunk, not one a byte
    assert sum(r.size for r in rejected) == decoder.rejected_bytes == 100_000 + 3
    assert all(len(r.data) <= REJECTED_SAMPLE_MAX for r in rejected)
    assert events[-1] == CardDrawn(parse_card("AH"))
    assert decoder.counters["overlong_lines"] == 1


def test_noise_with_no_line_end_does_not_swallow_the_next_card() -> None:
    """A burst of noise longer than a line, then a card line: the card is taken."""
    decoder = LineDecoder()
    noise = bytes(range(14, 114))  # 100 bytes, no line end
    events = decoder.feed(noise) + decoder.feed(b"H07\r\n") + decoder.feed(b"D13\r\n")
    assert [e for e in events if isinstance(e, CardDrawn)] == [
        CardDrawn(parse_card("7H")), CardDrawn(parse_card("KD"))
    ]
    assert sum(e.size for e in events if isinstance(e, Rejected)) == len(noise)
    assert decoder.rejected_bytes == len(noise)


def test_a_card_code_after_noise_on_its_line_is_taken_and_the_noise_reported() -> None:
    decoder = LineDecoder()
    events = decoder.feed(b"\x93\xffA01\r\nxA10\nA01x\r\n")
    assert events[:4] == [
        Rejected(b"\x93\xff", "bytes before the card code A01 on its line"),
        CardDrawn(parse_card("AS")),
        Rejected(b"x", "bytes before the card code A10 on its line"),
        CardDrawn(parse_card("TS")),
    ]
    (after,) = events[4:]  # noise after the code spoils the line: rejected, with its bytes
    assert isinstance(after, Rejected)
    assert after.data == b"A01x\r\n"
    assert after.reason.endswith("the card code A01 and 1 more byte(s): a card may be lost")
    assert decoder.rejected_bytes == 2 + 1 + 6


def test_resync_reports_a_partial_line() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b"H0") == []
    assert decoder.resync() == [Rejected(b"H0", "incomplete line when the stream was interrupted")]
    (after,) = decoder.feed(b"1\n")
    assert isinstance(after, Rejected)
    assert after.data == b"1\n"


def test_line_cannot_carry_anything_but_cards() -> None:
    codec = get_codec("line")
    assert codec.carries == frozenset({CardDrawn})
    assert not codec.can_carry(CutCard())
    with pytest.raises(NotCarriedError, match="CutCard"):
        codec.encoder().encode(CutCard())


@given(st.binary(max_size=2000), st.lists(st.integers(min_value=0), max_size=20))
def test_arbitrary_bytes_in_arbitrary_chunks_never_raise(data: bytes, cuts: list[int]) -> None:
    decoder = LineDecoder()
    events = feed_chunks(decoder, data, cuts)
    events += decoder.resync()
    counters = decoder.counters
    assert counters["bytes_in"] == len(data)
    assert all(isinstance(e, CardDrawn | Rejected) for e in events)
    # every byte is a card line or counted as rejected
    card_bytes = sum(len(e.card.shoe_code) + 1 for e in events if isinstance(e, CardDrawn))
    carriage_returns = counters["bytes_in"] - card_bytes - counters["rejected_bytes"]
    assert 0 <= carriage_returns <= counters["frames_ok"]


@given(
    st.lists(st.sampled_from(ALL_CARDS), max_size=60),
    st.lists(st.integers(min_value=0), max_size=30),
)
def test_cards_survive_any_chunking(cards: list[object], cuts: list[int]) -> None:
    encoder = LineEncoder()
    stream = b"".join(encoder.encode(CardDrawn(c)) for c in cards)  # type: ignore[arg-type]
    decoder = LineDecoder()
    assert feed_chunks(decoder, stream, cuts) == [CardDrawn(c) for c in cards]  # type: ignore[arg-type]
    assert decoder.rejected_bytes == 0


FALSE_CARD = re.compile(rb"[AHCD](0[1-9]|1[0-3])\r?\n")
"""A card line inside noise: the decoder rightly takes it, so the noise below has none."""


@given(
    st.lists(
        st.tuples(
            st.binary(max_size=120).filter(lambda b: not FALSE_CARD.search(b)),
            st.sampled_from(ALL_CARDS),
            st.sampled_from([b"\n", b"\r\n"]),
        ),
        max_size=30,
    ),
    st.binary(max_size=120),
    st.lists(st.integers(min_value=0), max_size=30),
)
def test_noise_between_card_lines_costs_no_card_and_every_byte_is_counted_once(
    lines: list[tuple[bytes, object, bytes]], trailing: bytes, cuts: list[int]
) -> None:
    """Noise of any length, with or without line ends, before each card line."""
    stream = b"".join(noise + card.shoe_code.encode() + end for noise, card, end in lines)  # type: ignore[attr-defined]
    trailing = trailing.replace(b"\n", b"")  # noise at the end, still waiting for a line end
    decoder = LineDecoder()
    events = feed_chunks(decoder, stream + trailing, cuts) + decoder.resync()
    assert [e for e in events if isinstance(e, CardDrawn)] == [
        CardDrawn(card) for _, card, _ in lines  # type: ignore[arg-type]
    ]
    noise = sum(len(n) for n, _, _ in lines) + len(trailing)
    assert sum(e.size for e in events if isinstance(e, Rejected)) == noise
    assert decoder.rejected_bytes == noise
    assert all(0 < len(e.data) <= min(e.size, REJECTED_SAMPLE_MAX) for e in events
               if isinstance(e, Rejected))
