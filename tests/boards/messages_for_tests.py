"""Hand-made controller messages for the board tests, with their seq given explicitly."""

from __future__ import annotations

from baccarat.controller.engine.roads import Roads
from baccarat.messages.bodies import (
    AlarmClearedMessage,
    AlarmMessage,
    CardMessage,
    HandResult,
    ResultMessage,
    RoundMessage,
    ShoeMessage,
    VoidMessage,
)
from baccarat.messages.roads import RoadsMessage


def shoe(seq: int, number: int = 1, cards_left: int = 410, **extra: object) -> ShoeMessage:
    fields: dict[str, object] = {
        "profile": "macau",
        "decks": 8,
        "cards_dealt": 0,
        "cards_burned": 6,
        "burn_due": 0,
        "phase": "ready",
        "cut_card": False,
        "last_round": False,
        "rounds": 0,
        "demo": False,
        "demo_rounds": 0,
    }
    fields.update(extra)
    return ShoeMessage(seq=seq, shoe=number, cards_left=cards_left, **fields)  # type: ignore[arg-type]


def round_open(seq: int, number: int, shoe_number: int = 1, demo: bool = False) -> RoundMessage:
    return RoundMessage(
        seq=seq,
        shoe=shoe_number,
        round=number,
        round_id=f"{shoe_number}-{number}",
        status="open",
        demo=demo,
        next="P1",
    )


def round_status(seq: int, number: int, status: str, shoe_number: int = 1) -> RoundMessage:
    return RoundMessage(
        seq=seq,
        shoe=shoe_number,
        round=number,
        round_id=f"{shoe_number}-{number}",
        status=status,  # type: ignore[arg-type]
        next=None,
    )


def card(
    seq: int, number: int, position: str, code: str | None, p: int, b: int, shoe_number: int = 1
) -> CardMessage:
    return CardMessage(
        seq=seq,
        shoe=shoe_number,
        round=number,
        position=position,  # type: ignore[arg-type]
        card=code,
        player_total=p,
        banker_total=b,
    )


def result(
    seq: int,
    number: int,
    winner: str,
    player: tuple[list[str], int],
    banker: tuple[list[str], int],
    shoe_number: int = 1,
    demo: bool = False,
) -> ResultMessage:
    def hand(cards: list[str], total: int) -> HandResult:
        pair = len(cards) >= 2 and cards[0][0] == cards[1][0]
        natural = len(cards) == 2 and total >= 8
        return HandResult(cards=cards, total=total, natural=natural, pair=pair)

    return ResultMessage(
        seq=seq,
        shoe=shoe_number,
        round=number,
        round_id=f"{shoe_number}-{number}",
        winner=winner,  # type: ignore[arg-type]
        player=hand(*player),
        banker=hand(*banker),
        demo=demo,
    )


def void(seq: int, number: int, shoe_number: int = 1) -> VoidMessage:
    return VoidMessage(
        seq=seq, shoe=shoe_number, round=number, round_id=f"{shoe_number}-{number}", reason="void"
    )


def alarm(seq: int, alarm_id: int, round_number: int = 1) -> AlarmMessage:
    return AlarmMessage(
        seq=seq,
        id=alarm_id,
        kind="extra_card",
        article="10",
        correctable=True,
        corrections=["accept_as_burn", "void"],
        shoe=1,
        round=round_number,
        card="5D",
        text="a card after a complete round",
    )


def alarm_cleared(seq: int, alarm_id: int) -> AlarmClearedMessage:
    return AlarmClearedMessage(
        seq=seq, id=alarm_id, kind="extra_card", by="accept_as_burn", shoe=1, round=1
    )


def roads(seq: int, winners: str, shoe_number: int = 1, cards_left: int = 400) -> RoadsMessage:
    """Roads of results written as letters B/P/T (lower case: with a natural), from round 1."""
    names = {"B": "banker", "P": "player", "T": "tie"}
    built = Roads()
    for number, letter in enumerate(winners, start=1):
        natural = letter.islower()
        built.add(number, names[letter.upper()], False, False, natural)  # type: ignore[arg-type]
    return built.message(seq=seq, shoe=shoe_number, cards_left=cards_left)
