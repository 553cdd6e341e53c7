"""The board state: messages folded into what a board shows, whatever MQTT delivers."""

from __future__ import annotations

import random

from baccarat.boards.state import BoardState, expected_next, fold, fold_all
from baccarat.controller.engine.replay import replay_lines
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.messages.bodies import Message
from baccarat.rules.profiles import load_profile
from boards.messages_for_tests import (
    alarm,
    alarm_cleared,
    card,
    result,
    roads,
    round_open,
    round_status,
    shoe,
    void,
)

# Round 1: P 7S KS = 7, B 6H KH = 6 -> player
ROUND_1: list[Message] = [
    shoe(1),
    round_open(2, 1),
    card(3, 1, "P1", "7S", 7, 0),
    card(4, 1, "B1", "6H", 7, 6),
    card(5, 1, "P2", "KS", 7, 6),
    card(6, 1, "B2", "KH", 7, 6),
    result(7, 1, "player", (["7S", "KS"], 7), (["6H", "KH"], 6)),
    round_status(8, 1, "complete"),
    shoe(9, cards_left=406, rounds=1),
    roads(10, "P", cards_left=406),
]


def test_cards_build_the_live_round_card_by_card() -> None:
    state = fold_all(BoardState(table="T1"), ROUND_1[:4])
    live = state.live
    assert live is not None
    assert (live.shoe, live.round, live.status) == (1, 1, "open")
    assert live.hand("P") == ["7S"]
    assert live.hand("B") == ["6H"]
    assert (live.player_total, live.banker_total) == (7, 6)
    assert live.next == "P2"


def test_a_complete_round_has_its_result_and_no_next_card() -> None:
    state = fold_all(BoardState(), ROUND_1)
    live = state.live
    assert live is not None
    assert live.status == "complete"
    assert live.next is None
    assert live.result is not None
    assert live.result.winner == "player"
    assert [r.round_id for r in state.results] == ["1-1"]
    assert state.roads is not None
    assert state.roads.stats.player == 1
    assert state.shoe is not None
    assert state.shoe.cards_left == 406


def test_expected_next_follows_the_tableau() -> None:
    # P 2+3 = 5 draws; B 6+K = 6
    cards = (("P1", "2S"), ("B1", "6H"), ("P2", "3D"), ("B2", "KC"))
    assert expected_next(cards) == "P3"
    # Player drew a 7: banker on 6 draws on 6-7
    assert expected_next((*cards, ("P3", "7C"))) == "B3"
    assert expected_next((("P1", None),)) is None  # unreadable: unknowable


def test_every_duplicate_changes_nothing() -> None:
    messages = [*ROUND_1, alarm(11, 1), alarm(12, 2), alarm_cleared(13, 1), void(14, 1)]
    state = fold_all(BoardState(), messages)
    for message in messages:
        assert fold(state, message) is state


def test_retained_messages_again_after_a_reconnect_change_nothing() -> None:
    messages = [*ROUND_1, round_open(11, 2), card(12, 2, "P1", "9D", 9, 0)]
    state = fold_all(BoardState(), messages)
    # the broker sends the retained shoe, round and roads again, older than what is shown
    for retained in (shoe(9, cards_left=406, rounds=1), round_open(11, 2), roads(10, "P")):
        assert fold(state, retained) is state
    assert state.live is not None
    assert state.live.hand("P") == ["9D"]


def test_an_older_round_status_does_not_go_back_in_time() -> None:
    state = fold_all(BoardState(), ROUND_1)
    assert fold(state, round_open(2, 1)) is state


def test_a_card_of_a_round_whose_opening_was_missed_starts_it() -> None:
    state = fold_all(BoardState(), [*ROUND_1, card(12, 2, "P1", "9D", 9, 0)])
    live = state.live
    assert live is not None
    assert (live.round, live.status, live.hand("P")) == (2, "open", ["9D"])


def test_a_late_card_of_an_earlier_round_is_ignored() -> None:
    state = fold_all(BoardState(), [*ROUND_1, round_open(11, 2)])
    assert fold(state, card(3, 1, "P1", "7S", 7, 0)) is state


def test_a_card_message_out_of_order_keeps_the_newest_totals() -> None:
    state = fold_all(BoardState(), [round_open(2, 1), card(4, 1, "B1", "6H", 7, 6)])
    state = fold(state, card(3, 1, "P1", "7S", 7, 0))
    assert state.live is not None
    assert (state.live.player_total, state.live.banker_total) == (7, 6)
    assert state.live.hand("P") == ["7S"]


def test_a_void_withdraws_the_result_and_a_late_copy_stays_out() -> None:
    state = fold_all(BoardState(), ROUND_1)
    state = fold(state, void(11, 1))
    assert state.results == ()
    assert state.live is not None
    assert state.live.status == "void"
    late = result(7, 1, "player", (["7S", "KS"], 7), (["6H", "KH"], 6))
    assert fold(state, late) is state


def test_demo_results_show_live_but_do_not_count() -> None:
    state = fold_all(
        BoardState(),
        [
            shoe(1),
            round_open(2, 1, demo=True),
            result(3, 1, "banker", (["2S", "3S"], 5), (["4H", "4D"], 8), demo=True),
        ],
    )
    assert state.live is not None
    assert state.live.demo is True
    assert state.live.result is not None
    assert state.results == ()


def test_alarms_are_raised_and_cleared_and_a_late_copy_stays_cleared() -> None:
    state = fold_all(BoardState(), [alarm(1, 7), alarm(2, 8)])
    assert [a.id for a in state.alarms] == [7, 8]
    state = fold(state, alarm_cleared(3, 7))
    assert [a.id for a in state.alarms] == [8]
    assert fold(state, alarm(1, 7)) is state  # QoS 1 sent it again after the clear
    assert fold(state, alarm(2, 8)) is state


def test_roads_only_move_forward_by_seq() -> None:
    state = fold_all(BoardState(), [shoe(1), roads(10, "PB")])
    assert fold(state, roads(5, "P")) is state
    state = fold(state, roads(12, "PBB"))
    assert state.roads is not None
    assert len(state.roads.bead_plate.cells) == 3


def test_a_new_shoe_hides_the_old_roads_and_results() -> None:
    state = fold_all(BoardState(), ROUND_1)
    state = fold(state, shoe(20, number=2, cards_left=416))
    assert state.roads is None  # the retained roads are still shoe 1's
    assert state.roads_message is not None
    assert state.results == ()
    state = fold(state, roads(30, "B", shoe_number=2))
    assert state.roads is not None
    assert state.roads.shoe == 2


def test_a_controller_restarting_its_sequence_starts_the_board_over() -> None:
    state = fold_all(BoardState(table="T1"), [shoe(5000), roads(5001, "PPB")])
    state = fold(state, shoe(1, number=1, cards_left=416))
    assert state.table == "T1"
    assert state.highest_seq == 1
    assert state.roads_message is None
    assert state.shoe is not None
    assert state.shoe.cards_left == 416


def full_shoe_messages(seed: int) -> list[Message]:
    lines = [i.to_text() for i in shoe_inputs(8, seed)]
    return list(replay_lines(lines, load_profile("macau"), on_error=lambda n, t: None))


def test_a_full_shoe_with_random_duplicates_ends_as_without() -> None:
    messages = full_shoe_messages(seed=3)
    clean = fold_all(BoardState(), messages)
    rng = random.Random(1)
    noisy: list[Message] = []
    for index, message in enumerate(messages):
        noisy.append(message)
        if rng.random() < 0.2:  # a redelivery of a message seen a little earlier
            noisy.append(messages[max(0, index - rng.randrange(5))])
    state = fold_all(BoardState(), noisy)
    assert state.roads == clean.roads
    assert state.results == clean.results
    assert state.alarms == clean.alarms
    assert state.live == clean.live
    assert state.roads is not None
    assert [r.winner for r in state.results[-5:]] == [
        c.winner for c in state.roads.bead_plate.cells[-5:]
    ]
