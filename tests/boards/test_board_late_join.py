"""A board that connects mid-round: the retained messages alone show the hand and the alarms."""

from __future__ import annotations

import random
from dataclasses import replace

from baccarat.boards.state import BoardState, fold, fold_all
from baccarat.messages.bodies import AlarmMessage, AlarmsMessage
from boards.late_join import HAND, MID_ROUND, played, retained
from boards.messages_for_tests import alarm, alarm_cleared


def test_a_board_that_connects_mid_round_sees_the_hand_and_every_open_alarm() -> None:
    messages = played(MID_ROUND)
    everything = fold_all(BoardState(), messages)
    for order in range(5):  # retained messages come in any order of their topics
        late = retained(messages)
        random.Random(order).shuffle(late)
        state = fold_all(BoardState(), late)
        assert state.live is not None
        assert (state.live.round, state.live.status) == (2, "open")
        assert state.live.cards == HAND
        assert (state.live.player_total, state.live.banker_total) == (6, 6)
        assert state.live.next == "B2"
        assert [(a.kind, a.round) for a in state.alarms] == [
            ("link_down", None),
            ("foreign_card", 2),
        ]
        assert state.live == everything.live
        lasting = [a for a in everything.alarms if a.lasting]
        assert state.alarms == tuple(lasting)  # the one-off bad_data only for who saw it


def test_the_live_messages_after_the_retained_ones_carry_on_from_them() -> None:
    messages = played([*MID_ROUND, "device link_up", "KD", "accept_as_burn"])
    cut = len(played(MID_ROUND))
    state = fold_all(BoardState(), [*retained(messages[:cut]), *messages[cut:]])
    assert state.live is not None
    assert state.live.status == "complete"
    assert state.live.result is not None
    assert state.alarms == ()


def test_an_alarms_body_keeps_what_the_board_heard_after_it() -> None:
    raised, newer = _lasting(alarm(10, 1)), _lasting(alarm(20, 2))
    state = fold_all(BoardState(), [raised, newer, alarm_cleared(21, 1)])
    old_list = AlarmsMessage(seq=15, alarms=[raised])
    assert fold(state, old_list).alarms == (newer,)  # 1 cleared since, 2 raised since
    stale = fold(state, AlarmsMessage(seq=30, alarms=[]))
    assert stale.alarms == ()  # as of seq 30 nothing is open: 2 was settled unheard
    older = fold(stale, AlarmsMessage(seq=25, alarms=[newer]))
    assert older is stale


def test_the_alarms_body_gives_a_coalesced_alarm_its_count() -> None:
    first = _lasting(alarm(10, 1))
    coalesced = replace(first, count=2, cards=["5D", "AS"])  # raised once: the same seq
    state = fold_all(BoardState(), [first, AlarmsMessage(seq=12, alarms=[coalesced]), first])
    assert [(a.id, a.count) for a in state.alarms] == [(1, 2)]


def _lasting(message: AlarmMessage) -> AlarmMessage:
    return replace(message, lasting=True)
