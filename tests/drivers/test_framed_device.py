"""The device side of ``framed``: window, go-back-N retransmission, heartbeats."""

from __future__ import annotations

from baccarat.cards import ALL_CARDS
from baccarat.drivers.events import CardDrawn, Heartbeat, Hello
from baccarat.drivers.framed import FramedDecoder
from baccarat.drivers.framed_device import FramedSender
from baccarat.drivers.framed_wire import ack_frame, position_frame, query_frame


def test_sender_retransmits_until_acknowledged_and_releases_on_ack() -> None:
    sender = FramedSender(window=2, retransmit_timeout=0.5, heartbeat_interval=None, session=9)
    decoder = FramedDecoder()
    for card in ALL_CARDS[:3]:
        sender.queue(CardDrawn(card))
    sent = [sender.next_frame(0.0), sender.next_frame(0.0)]  # HELLO and the first card
    assert sender.next_frame(0.1) is None  # window full
    assert sender.next_deadline() == 0.5
    again = [sender.next_frame(0.6), sender.next_frame(0.6)]
    assert again == sent
    assert sender.retransmissions == 2
    events = decoder.feed(b"".join(f for f in again if f))
    assert events == [Hello(2, seq=0), CardDrawn(ALL_CARDS[0], seq=1)]
    assert sender.receive(decoder.pending_output()) == 2
    rest = []
    while (frame := sender.next_frame(0.7)) is not None:
        rest.append(frame)
    assert decoder.feed(b"".join(rest)) == [
        CardDrawn(ALL_CARDS[1], seq=2),
        CardDrawn(ALL_CARDS[2], seq=3),
    ]
    sender.receive(decoder.pending_output())
    assert sender.idle


def test_sender_sends_heartbeats_when_idle() -> None:
    sender = FramedSender(heartbeat_interval=1.0, session=1)
    hello = sender.next_frame(0.0)
    assert hello is not None
    sender.receive(ack_frame(0))
    assert sender.next_frame(0.5) is None
    assert sender.next_deadline() == 1.0
    beat = sender.next_frame(1.0)
    assert beat is not None
    assert FramedDecoder().feed(hello + beat) == [Hello(2, seq=0), Heartbeat(seq=1)]


def test_a_query_is_answered_first_as_things_stand_when_the_answer_goes() -> None:
    sender = FramedSender(heartbeat_interval=None, session=0x0102)
    sender.queue(CardDrawn(ALL_CARDS[0]))
    sender.next_frame(0.0)
    sender.next_frame(0.0)  # HELLO 0 and the card 1 in flight
    sender.receive(query_frame(3) + ack_frame(0))  # the ACK came after the QUERY
    assert sender.answers_due == 1
    assert sender.next_frame(0.0) == position_frame(3, oldest=1, next_seq=2, session=0x0102)
    for nonce in range(10):  # a host that asks too fast gets answers to the newest
        sender.receive(query_frame(nonce))
    answers = [sender.next_frame(0.0) for _ in range(4)]
    assert answers == [position_frame(n, 1, 2, 0x0102) for n in range(6, 10)]
    assert sender.next_frame(0.0) is None
