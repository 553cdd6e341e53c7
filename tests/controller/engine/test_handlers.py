"""The engine's one registry of handlers (engine/handlers.py), and what it feeds.

Every input type has exactly one handler, in one of the rooms; every operator command is
the handler of the input it makes; docs/design.md shows the registry as it is; the engine
refuses an object that is no input.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from baccarat.controller.commands import COMMANDS
from baccarat.controller.engine import inputs
from baccarat.controller.engine.engine import HANDLERS, Engine
from baccarat.controller.engine.handlers import by_name, handler_table, handles
from baccarat.rules.profiles import load_profile

DESIGN = Path(__file__).resolve().parents[3] / "docs" / "design.md"
ROOMS = {"dealing", "rounds", "corrections", "shoe_room"}


def test_every_input_type_has_one_handler_in_a_room() -> None:
    kinds = {
        value for value in vars(inputs).values()
        if isinstance(value, type) and issubclass(value, inputs.Input)
        and value is not inputs.Input
    }
    assert set(HANDLERS) == kinds
    assert {h.room for h in HANDLERS.values()} == ROOMS
    for handler in HANDLERS.values():
        assert handler.description.endswith("."), handler.name
        assert "\n" not in handler.description, handler.name
        assert handler.apply.__name__.startswith("_on_"), handler.name


def test_every_command_is_the_handler_of_the_input_it_makes() -> None:
    for name, spec in COMMANDS.items():
        assert by_name()[name].input is spec.input
        assert spec.description == HANDLERS[spec.input].description


def test_the_arguments_are_the_inputs_own_fields() -> None:
    assert by_name()["void"].arguments == ("reason", "confirm")
    assert by_name()["declare"].arguments == ("winner",)
    assert by_name()["declare"].schema == {"winner": "Winner"}
    assert by_name()["open"].arguments == ()


def test_a_second_handler_of_an_input_is_refused() -> None:
    with pytest.raises(ValueError, match="a second handler of DrawCard"):
        handles(inputs.DrawCard, "card_again", "A copy.")(lambda engine, inp: None)


def test_docs_show_the_registry_as_it_is() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    assert "\n".join(handler_table()) in text, (
        "docs/design.md's table of handlers differs: paste "
        "`python -c 'from baccarat.controller.engine.engine import *; "
        "from baccarat.controller.engine.handlers import handler_table; "
        "print(*handler_table(), sep=chr(10))'`"
    )


def test_an_object_that_is_no_input_is_refused_with_a_type_error() -> None:
    with pytest.raises(TypeError, match="not an engine input"):
        Engine(load_profile("macau")).feed(inputs.Input())  # the base: no handler


def test_the_engines_modules_and_classes_stay_small() -> None:
    """No module of the engine over 600 lines, no class over 400 (it was one of 1,087)."""
    package = Path(__file__).resolve().parents[3] / "src/baccarat/controller/engine"
    too_long = []
    for path in sorted(package.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 600:
            too_long.append(path.name)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and (node.end_lineno or 0) - node.lineno >= 400:
                too_long.append(f"{path.name}: {node.name}")
    assert too_long == []
