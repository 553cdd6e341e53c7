"""The host's ALARM frame (PROTOCOL.md 6.9): bytes, stuffing, the device's lease, refresh."""

from __future__ import annotations

from pathlib import Path

import pytest

from baccarat.cards import ALL_CARDS
from baccarat.drivers import framed, framed_wire
from baccarat.drivers.codec import get_codec
from baccarat.drivers.events import CardDrawn, Rejected
from baccarat.drivers.framed import ALARM_REFRESH, AlarmTeller, FramedDecoder
from baccarat.drivers.framed_device import ALARM_LEASE, FramedSender
from baccarat.drivers.framed_wire import (
    ALARM,
    AlarmNotice,
    FrameSplitter,
    ack_frame,
    alarm_frame,
    alarm_payload,
    crc16,
    encode_frame,
    parse_alarm,
)

SPEC = Path(framed.__file__).with_name("PROTOCOL.md")
OPEN_1 = "7E 0F 00 05 01 00 00 00 01 65 78 74 72 61 5F 63 61 72 64 0C CD 7E"
CLEARED_1 = "7E 0F 00 05 00 00 00 00 01 65 78 74 72 61 5F 63 61 72 64 A2 31 7E"
STUFFED = "7E 11 00 05 01 00 00 7D 5E 7D 5D 66 6F 72 65 69 67 6E 5F 63 61 72 64 AC 4C 7E"


def wire(text: str) -> bytes:
    return bytes.fromhex(text)


def sender() -> FramedSender:
    return FramedSender(heartbeat_interval=None, session=1)


def test_the_worked_example_of_the_spec() -> None:
    opened = alarm_frame(AlarmNotice(1, "extra_card", open=True))
    assert opened == wire(OPEN_1)
    body = opened[1:-1]
    assert crc16(body[:-2]) == 0x0CCD
    assert alarm_frame(AlarmNotice(1, "extra_card", open=False)) == wire(CLEARED_1)
    spec = SPEC.read_text()
    for line in (OPEN_1, CLEARED_1, STUFFED):
        assert line in spec
    assert "| `0x05` | ALARM |" in spec
    assert "| `ALARM_REFRESH` | 1 s |" in spec
    assert "| `ALARM_LEASE` | 3.5 s |" in spec


def test_an_id_with_flag_and_escape_bytes_is_stuffed_and_read_back() -> None:
    notice = AlarmNotice(0x7E7D, "foreign_card", open=True)
    frame = alarm_frame(notice)
    assert frame == wire(STUFFED)
    assert framed_wire.FLAG not in frame[1:-1]
    (body,) = FrameSplitter().split(frame)
    assert isinstance(body, bytes)
    assert body[2] == ALARM
    assert body[1] == 0
    assert parse_alarm(body[3:-2]) == notice
    device = sender()
    device.receive(frame, now=10.0)
    assert device.open_alarms(10.0) == {0x7E7D: "foreign_card"}


def test_the_payload_round_trips_and_bad_kinds_are_refused() -> None:
    notice = AlarmNotice(0xFFFFFFFF, "x" * 59, open=False)
    assert parse_alarm(alarm_payload(notice)) == notice
    for kind in ("", "x" * 60, "carte_étrangère", "tab\there"):
        with pytest.raises(ValueError):
            alarm_payload(AlarmNotice(1, kind, open=True))
    with pytest.raises(ValueError):
        alarm_payload(AlarmNotice(2**32, "extra_card", open=True))


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (b"", "empty"),
        (b"\x01\x00\x00\x00\x01", "no kind"),
        (b"\x02\x00\x00\x00\x01extra_card", "state 2"),
        (b"\xff\x00\x00\x00\x01extra_card", "state 255"),
        (b"\x01\x00\x00\x00\x01extra\xe9card", "a byte that is not ASCII"),
        (b"\x01\x00\x00\x00\x01extra\x00card", "a control byte"),
    ],
)
def test_a_malformed_alarm_frame_is_ignored_and_counted(payload: bytes, why: str) -> None:
    device = sender()
    device.receive(encode_frame(0, ALARM, payload) + ack_frame(0), now=0.0)
    assert device.open_alarms(0.0) == {}, why
    assert device.bad_alarms == 1
    assert device.alarms_in == 0
    assert device.counters["bad_alarms"] == 1


def test_open_and_cleared_and_a_cleared_frame_for_an_unknown_alarm() -> None:
    device = sender()
    device.receive(alarm_frame(AlarmNotice(3, "extra_card", open=True)), now=0.0)
    device.receive(alarm_frame(AlarmNotice(4, "missing_card", open=True)), now=0.5)
    assert device.open_alarms(1.0) == {3: "extra_card", 4: "missing_card"}
    assert device.alarm_deadline() == ALARM_LEASE
    device.receive(alarm_frame(AlarmNotice(9, "extra_card", open=False)), now=1.0)
    device.receive(alarm_frame(AlarmNotice(3, "extra_card", open=False)), now=1.0)
    assert device.open_alarms(1.0) == {4: "missing_card"}
    assert device.alarms_in == 4


def test_the_lease_runs_out_without_a_refresh() -> None:
    device = sender()
    device.receive(alarm_frame(AlarmNotice(1, "extra_card", open=True)), now=100.0)
    assert device.open_alarms(100.0 + ALARM_LEASE - 0.01) == {1: "extra_card"}
    assert device.open_alarms(100.0 + ALARM_LEASE) == {}
    assert device.alarm_deadline() is None


def test_refresh_repairs_a_lost_open_frame_and_keeps_the_lease() -> None:
    teller, device = AlarmTeller(), sender()
    lost = teller.tell([(1, "extra_card")], now=0.0)
    assert lost == alarm_frame(AlarmNotice(1, "extra_card", open=True))  # lost on the wire
    assert teller.tell([(1, "extra_card")], now=0.2) == b""  # idempotent: nothing changed
    assert teller.refresh(0.5) == b""
    assert device.open_alarms(0.5) == {}
    device.receive(teller.refresh(ALARM_REFRESH), now=ALARM_REFRESH)
    assert device.open_alarms(ALARM_REFRESH) == {1: "extra_card"}  # repaired within 1 s
    for tick in range(2, 10):  # while it lasts the repeats renew the lease
        device.receive(teller.refresh(float(tick)), now=float(tick))
        assert device.open_alarms(tick + 0.99) == {1: "extra_card"}
    cleared = teller.tell([], now=9.5)
    assert cleared == alarm_frame(AlarmNotice(1, "extra_card", open=False))
    assert teller.refresh(20.0) == b""
    device.receive(cleared, now=9.5)
    assert device.open_alarms(9.5) == {}


def test_a_lost_cleared_frame_costs_the_lease_and_no_more() -> None:
    teller, device = AlarmTeller(), sender()
    device.receive(teller.tell([(5, "wrong_declare")], now=0.0), now=0.0)
    device.receive(teller.refresh(1.0), now=1.0)
    device.receive(teller.refresh(2.0), now=2.0)
    teller.tell([], now=2.5)  # the cleared frame is lost
    for tick in (3.0, 4.0, 5.0):
        assert teller.refresh(tick) == b""  # nothing repeats a settled alarm
    assert device.open_alarms(2.0 + ALARM_LEASE - 0.01) == {5: "wrong_declare"}
    assert device.open_alarms(2.0 + ALARM_LEASE) == {}


def test_a_new_kind_for_an_id_is_cleared_and_opened_and_every_repeats_all() -> None:
    teller = AlarmTeller()
    teller.tell([(1, "extra_card"), (2, "missing_card")], now=0.0)
    changed = teller.tell([(1, "foreign_card"), (2, "missing_card")], now=0.1)
    assert changed == alarm_frame(AlarmNotice(1, "extra_card", open=False)) + alarm_frame(
        AlarmNotice(1, "foreign_card", open=True)
    )
    again = teller.refresh(0.2, every=True)
    assert again == alarm_frame(AlarmNotice(1, "foreign_card", open=True)) + alarm_frame(
        AlarmNotice(2, "missing_card", open=True)
    )
    assert teller.open == {1: "foreign_card", 2: "missing_card"}


def test_a_kind_the_frame_cannot_carry_is_made_printable_not_raised() -> None:
    teller = AlarmTeller()
    frame = teller.tell([(1, "é" + "k" * 80)], now=0.0)
    (body,) = FrameSplitter().split(frame)
    assert isinstance(body, bytes)
    notice = parse_alarm(body[3:-2])
    assert notice == AlarmNotice(1, "?" + "k" * 58, open=True)


def test_a_device_that_does_not_know_a_host_frame_type_ignores_it() -> None:
    """What lets the host send ALARM to a version-1 device: unknown types are ignored.

    A device of this implementation before ALARM handled only ACK and QUERY: a frame of a
    type it does not know (here the reserved 0x06, as ALARM is to it) between two ACKs
    changes nothing, and the ACK after it still releases its frames.
    """
    device = sender()
    for card in ALL_CARDS[:2]:
        device.queue(CardDrawn(card))
    for _ in range(3):
        device.next_frame(0.0)  # HELLO 0, cards 1 and 2
    unknown = encode_frame(0, 0x06, b"\x01\x00\x00\x00\x01extra_card")
    assert device.receive(ack_frame(0) + unknown + ack_frame(2), now=0.1) == 3
    assert device.idle
    assert device.open_alarms(0.1) == {}
    assert device.bad_alarms == 0


def test_the_host_decoder_takes_an_alarm_from_the_device_for_a_stray_host_frame() -> None:
    decoder = FramedDecoder(expected=0)
    card = encode_frame(0, framed_wire.CARD, bytes((1, ord("S"))))
    events = decoder.feed(alarm_frame(AlarmNotice(1, "extra_card", open=True)) + card)
    assert isinstance(events[0], Rejected)
    assert events[1:] == [CardDrawn(ALL_CARDS[0], seq=0)]
    assert decoder.counters["unexpected_frames"] == 1


def test_the_codecs_say_whether_they_can_tell_alarms() -> None:
    assert get_codec("framed").tells_alarms
    assert not get_codec("line").tells_alarms
