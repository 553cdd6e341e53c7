"""The engine's one registry of handlers: each input by its name, arguments and purpose.

Every room of the engine (``dealing``, ``rounds``, ``corrections``, ``shoe_room``)
registers the handler of each input it takes with :func:`handles`: the input's type, its
name (the first word of its replay notation, and the operator command's name where one
stands for it), a one-line description; its arguments are the input's own fields. The
engine applies an input by looking its handler up here (no ``match`` of its own);
``controller/commands.py`` takes each command's description from here and is checked
against it (every command names a handler of the input it makes), and docs/design.md's
table of handlers is :func:`handler_table` (tests/controller/engine/test_handlers.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Final, TypeVar

from baccarat.controller.engine.inputs import Input

COMMON_FIELDS: Final = frozenset(f.name for f in fields(Input))
"""What every input carries (time, origin, device frame): no handler's argument."""

F = TypeVar("F", bound=Callable[..., None])


@dataclass(frozen=True, slots=True)
class Handler:
    """One registered handler."""

    name: str
    """The input's name: its replay notation's first word, the command's name."""
    input: type[Input]
    room: str
    """The engine's module that holds it (``dealing``, ``rounds``...)."""
    description: str
    apply: Callable[[Any, Any], None]
    """The room's method: ``apply(engine, inp)``."""

    @property
    def arguments(self) -> tuple[str, ...]:
        """The input's own fields: the arguments of the command or the notation."""
        return tuple(f.name for f in fields(self.input) if f.name not in COMMON_FIELDS)

    @property
    def schema(self) -> dict[str, str]:
        """Each argument's type, as the input declares it (``winner``: ``Winner``)."""
        return {
            f.name: str(f.type) for f in fields(self.input) if f.name not in COMMON_FIELDS
        }


HANDLERS: Final[dict[type[Input], Handler]] = {}
"""Every input type's handler, in the order the rooms register them."""


def handles(input_type: type[Input], name: str, description: str) -> Callable[[F], F]:
    """Register the decorated method of a room as the handler of ``input_type``."""

    def register(method: F) -> F:
        if input_type in HANDLERS or name in by_name():
            raise ValueError(f"a second handler of {input_type.__name__} ({name})")
        room = method.__module__.rsplit(".", 1)[-1]
        HANDLERS[input_type] = Handler(name, input_type, room, description, method)
        return method

    return register


def by_name() -> dict[str, Handler]:
    """The handlers by their input's name."""
    return {handler.name: handler for handler in HANDLERS.values()}


def handler_table() -> list[str]:
    """The registry as a Markdown table (docs/design.md shows it)."""
    rows = ["| input | room | arguments | what it does |", "|---|---|---|---|"]
    for handler in sorted(HANDLERS.values(), key=lambda h: (h.room, h.name)):
        schema = handler.schema
        arguments = ", ".join(
            f"`{a}: {t}`".replace("|", "\\|") for a, t in schema.items()  # a table's cell
        ) or "none"
        rows.append(
            f"| `{handler.name}` | {handler.room} | {arguments} | {handler.description} |"
        )
    return rows
