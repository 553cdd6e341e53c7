"""The floor's areas (``baccarat pit --areas FILE``): which tables the console groups together.

A TOML file of area names, each with its tables, in the order the floor view shows them::

    "Pit A" = ["T01", "T02", "T03"]
    "High limit" = ["VIP1", "VIP2"]

A table may be in one area only; a table no area names is shown under *Other*. The page
reads it as ``/areas.json``: ``{"areas": [{"name": "Pit A", "tables": ["T01", ...]}]}``.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Final

from baccarat.errors import BaccaratError

AREAS_PATH: Final = "/areas.json"
"""Where the console's page reads the areas."""


class AreasError(BaccaratError, ValueError):
    """The areas file cannot be read, or says something it may not."""


def load_areas(path: Path) -> list[tuple[str, list[str]]]:
    """The areas of ``path`` in its order, each with its tables; :class:`AreasError` if wrong."""
    try:
        found = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AreasError(f"cannot read the areas file {path}: {exc}") from exc
    areas: list[tuple[str, list[str]]] = []
    seen: dict[str, str] = {}
    for name, tables in found.items():
        if not isinstance(tables, list) or not all(isinstance(t, str) and t for t in tables):
            raise AreasError(f"{path}: area {name!r}: a list of table names, not {tables!r}")
        for table in tables:
            if table in seen:
                raise AreasError(f"{path}: table {table!r} is in {seen[table]!r} and {name!r}")
            seen[table] = name
        areas.append((name, list(tables)))
    return areas


def areas_json(areas: list[tuple[str, list[str]]]) -> bytes:
    """The ``/areas.json`` body of the areas."""
    body = {"areas": [{"name": name, "tables": tables} for name, tables in areas]}
    return json.dumps(body, ensure_ascii=False).encode()
