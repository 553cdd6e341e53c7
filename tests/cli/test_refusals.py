"""Commands refuse what is wrong, and say what: a missing database, an unknown table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baccarat.cli import main
from baccarat.floor.store import Received, open_store


def stored(db: Path, tables: list[str]) -> None:
    """A recorder's database with one card of each table."""
    store = open_store(str(db))
    body = {"schema": 1, "type": "card", "seq": 1, "shoe": 1, "round": 1, "ts": 10.0,
            "position": "P1", "card": "9S"}
    store.add([Received(t, f"baccarat/{t}/card", body, json.dumps(body), 1.0) for t in tables])
    store.close()


def test_history_of_a_missing_database_is_an_error_naming_it_and_creates_nothing(
    tmp_path: Path, capsys: Any
) -> None:
    db = tmp_path / "missing.db"
    assert main(["history", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"cannot open {db}: no such database file" in err
    assert not db.exists()
    assert list(tmp_path.iterdir()) == []


def test_history_of_an_unknown_table_names_it_and_the_tables_known(
    tmp_path: Path, capsys: Any
) -> None:
    db = tmp_path / "floor.db"
    stored(db, ["T2", "T1"])
    assert main(["history", "--db", str(db), "--table", "T999"]) == 2
    err = capsys.readouterr().err
    assert f"table 'T999' is unknown to {db}; it knows 2 table(s): T1, T2" in err
    assert main(["history", "--db", str(db), "--table", "T1"]) == 0
