"""One command registry, ``controller.commands.COMMANDS``, and everything that names commands.

The MQTT commands, the replay notation, the dealer's buttons and the pit console's buttons.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from baccarat.controller.commands import BUTTONS, COMMANDS, button_input, parse_command
from baccarat.controller.engine.inputs import notation, parse_input
from baccarat.drivers import events
from baccarat.drivers.framed_events import _BUTTON_CODES

EXAMPLES = {  # a body of each command that the engine's input shows whole
    "open": {}, "reveal": {}, "exposed": {}, "end": {}, "announce_burn": {},
    "void": {"reason": "wrong card", "confirm": True},
    "accept_as_burn": {"alarm": 7},
    "burn": {"count": 3},
    "declare": {"winner": "tie"},
    "shoe": {"decks": 8},
    "demo": {"on": True},
}
CONSOLE = Path(__file__).parents[2] / "src/baccarat/pit/web/console.js"


def test_every_command_has_an_example_here() -> None:
    assert set(EXAMPLES) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_command_reads_back_the_same_from_the_replay_notation(name: str) -> None:
    inp, _ = parse_command(name, json.dumps(EXAMPLES[name]).encode(), 1.5)
    line = notation(inp)
    assert line.split()[0].removesuffix("_unconfirmed") == name
    assert parse_input(line, 1.5) == inp


def test_every_button_on_the_wire_is_a_command_or_says_it_changes_nothing() -> None:
    assert set(BUTTONS) == set(events.BUTTONS) == set(_BUTTON_CODES)
    for button, sent in BUTTONS.items():
        inp = button_input(button, 2.0)
        if sent is None:
            assert inp is None
            continue
        assert inp is not None
        assert inp.origin == "button"
        assert notation(inp).split()[1].removesuffix("_unconfirmed") == sent[0]


def test_the_pit_console_sends_only_commands_the_controller_knows() -> None:
    sent = set(re.findall(r'command: "([a-z_]+)"', CONSOLE.read_text(encoding="utf-8")))
    assert sent, "the console's buttons were not found"
    assert sent <= set(COMMANDS), sent - set(COMMANDS)
