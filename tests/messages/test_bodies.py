"""The bodies the engine builds: each field lands where the schema says it belongs."""

from __future__ import annotations

from baccarat.messages import bodies
from baccarat.messages.catalog import MESSAGE_TYPES, make_serializers
from support.tables import Table, of


def test_a_dealt_round_s_fields_land_where_they_belong() -> None:
    table = Table("macau", burn="fixed", burn_count=0, open_mode="explicit")
    table.do("shoe", "open")
    out = table.do("9S, 2H, KD, 3C")  # player 9 (natural), banker 5: player wins, no draws
    cards = of(out, "card")
    assert [(c.position, c.card, c.player_total, c.banker_total, c.face_up) for c in cards] == [
        ("P1", "9S", 9, 0, False),
        ("B1", "2H", 9, 2, False),
        ("P2", "KD", 9, 2, False),
        ("B2", "3C", 9, 5, False),
    ]
    (result,) = of(out, "result")
    assert (result.winner, result.player.total, result.banker.total) == ("player", 9, 5)
    assert (result.player.cards, result.player.natural, result.banker.pair) == (
        ["9S", "KD"], True, False,
    )
    round_done = of(out, "round")[-1]
    assert (round_done.status, round_done.next, round_done.round_id) == ("complete", None, "1-1")
    shoe = of(out, "shoe")[-1]
    assert (shoe.cards_dealt, shoe.cards_burned, shoe.cards_left, shoe.rounds) == (4, 0, 412, 1)
    (recall,) = of(out, "recall")
    last = recall.rounds[-1]
    assert (last.player_total, last.banker_total, last.status, last.winner) == (
        9, 5, "result", "player",
    )
    assert [(d.position, d.card) for d in last.cards] == [
        ("P1", "9S"), ("B1", "2H"), ("P2", "KD"), ("B2", "3C"),
    ]


def test_make_serializers_builds_every_message_types_serializer_up_front() -> None:
    bodies.SERIALIZERS.clear()
    make_serializers()
    assert set(bodies.SERIALIZERS) == set(MESSAGE_TYPES)
