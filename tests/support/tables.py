"""A small driver for the engine: feed lines of the replay notation, look at messages."""

from __future__ import annotations

from typing import Any

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import parse_input
from baccarat.messages.bodies import AlarmMessage, Message
from baccarat.messages.catalog import parse_message
from baccarat.rules.profiles import load_profile


class Table:
    """An engine with a log of every message it produced."""

    def __init__(self, profile: str = "macau", **overrides: Any) -> None:
        self.engine = Engine(load_profile(profile, **overrides), roads=False)
        self.log: list[Message] = []

    def do(self, *lines: str) -> list[Message]:
        """Feed inputs (each must be accepted); return the messages they produced."""
        out: list[Message] = []
        for line in lines:
            for word in line.split(","):
                outcome = self.engine.feed(parse_input(word.strip()))
                assert outcome.refused is None, f"{word!r} refused: {outcome.refused}"
                for message in outcome.messages:  # the engine builds them unvalidated
                    assert parse_message(message.to_json()) == message, message
                out += outcome.messages
        self.log += out
        return out

    def refused(self, line: str, *, alarm: str | None = None) -> str:
        """Feed one input that must be refused; the state must not change.

        With ``alarm``, the refusal must come with one alarm of that kind, naming it.
        """
        seq = self.engine.seq
        outcome = self.engine.feed(parse_input(line))
        assert outcome.refused is not None, f"{line!r} was accepted"
        if alarm is None:
            assert outcome.messages == []
            assert self.engine.seq == seq
        else:
            [message] = outcome.messages
            assert isinstance(message, AlarmMessage), message
            assert (message.kind, message.correctable) == (alarm, False)
            assert outcome.refused in message.text
            assert self.engine.seq == seq + 1
            self.log.append(message)
        return outcome.refused


def of(messages: list[Message], kind: str) -> list[Any]:
    """The messages of one ``type``."""
    return [m for m in messages if getattr(m, "type", None) == kind]

