"""``parse_command`` against hostile and sloppy bodies: each one a specific error, never a raise.

Every error is also built into the reply the table would publish, so a body that would
break the reply (an id the JSON encoder cannot write) fails here too.
"""

from __future__ import annotations

import json

import pytest

from baccarat.controller.commands import (
    MAX_BODY,
    CommandError,
    parse_command,
    reply,
)
from baccarat.controller.engine.inputs import Burn, NewShoe, OpenRound, VoidRound


def refused(name: str, body: bytes, **options: bool) -> CommandError:
    """The error a command gets; its reply must be publishable and small."""
    with pytest.raises(CommandError) as caught:
        parse_command(name, body, **options)
    error = caught.value
    published = reply(name, error.request_id, str(error)).to_json().encode()
    assert len(published) < 1000, published[:200]
    return error


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"id": "\\ud800"}', "bad id"),  # a lone surrogate: the reply could not hold it
        (b'{"id": "' + b"7" * 65 + b'"}', "bad id"),
        (b'{"id": "tab\\there"}', "not all printable"),
        (b'{"id": true}', "not true"),
        (b'{"id": 9007199254740992}', "bad id"),
        (b'{"id": [1]}', "not a JSON array"),
        (b'{"id": ' + b"1" * 3000 + b"}", "a number of 3000 digits"),
        (b'{"id": ' + b"1" * 5000 + b"}", f"at most {MAX_BODY}"),
        (b"[" * 100_000, f"at most {MAX_BODY}"),
        (b"[" * 4000, "nested too deeply"),
        (b"[" * 2000 + b"]" * 2000, "nested too deeply"),
        (b'{"id": "' + b"x" * 10_000_000 + b'"}', "body of 10000010 bytes"),
        (b'{"id": NaN}', "NaN is not a JSON value"),
        (b"", "empty body"),
        (b"  \n", "empty body"),
        (b'{"\\ud800": 1}', "unicode"),
        (b"\xff\xfe{}", "not JSON"),
    ],
)
def test_hostile_bodies_are_refused_with_a_reason(body: bytes, says: str) -> None:
    error = refused("open", body)
    assert says in str(error)
    assert error.request_id is None  # a bad id is never echoed


def test_a_10_mb_id_is_not_echoed() -> None:
    body = json.dumps({"id": "x" * 10_000_000}).encode()
    error = refused("open", body)
    assert len(str(error)) < 100


@pytest.mark.parametrize(
    ("name", "body", "field"),
    [
        ("burn", b'{"count": true}', "count"),  # true is no number
        ("burn", b'{"count": "2"}', "count"),  # nor is a text of digits
        ("burn", b'{"count": 2.0}', "count"),
        ("shoe", b'{"decks": true}', "decks"),
        ("demo", b'{"on": 1}', "on"),
        ("demo", b'{"on": "true"}', "on"),
        ("void", b'{"confirm": 1}', "confirm"),
        ("declare", b'{"winner": ["banker"]}', "winner"),
    ],
)
def test_types_are_strict(name: str, body: bytes, field: str) -> None:
    error = refused(name, body)
    assert f"bad {name} command: {field}:" in str(error)


def test_a_valid_id_is_echoed_in_errors() -> None:
    assert refused("burn", b'{"id": "pit-7", "count": true}').request_id == "pit-7"
    assert refused("burn", b'{"id": -12, "count": 0}').request_id == -12


@pytest.mark.parametrize(
    ("reason", "says"),
    [
        ("dealer # dropped", "'#' (character 8) starts a comment"),
        ("two  spaces", "two in a row"),
        (" leading", "at its ends"),
        ("line\nbreak", "U+000A (character 5)"),
        ("bell\x07", "U+0007"),
        ("nbsp\u00a0here", "U+00A0"),
        ("surrogate \ud800", "U+D800"),
        ("", "empty"),
    ],
)
def test_a_void_reason_the_journal_cannot_hold_is_refused_not_cut(
    reason: str, says: str
) -> None:
    body = json.dumps({"reason": reason}).encode()
    error = refused("void", body)
    assert "the journal cannot record this reason" in str(error)
    assert says in str(error)


def test_a_void_reason_the_journal_can_hold_is_kept_whole() -> None:
    reason = "dealer dropped a card * twice, naïve 中文"
    inp, _ = parse_command("void", json.dumps({"reason": reason}).encode())
    assert inp == VoidRound(reason=reason, confirm=False)


def test_void_confirm_is_carried_to_the_input() -> None:
    inp, request_id = parse_command("void", b'{"confirm": true, "id": 3}')
    assert (inp, request_id) == (VoidRound(confirm=True), 3)
    assert parse_command("void", b"{}")[0] == VoidRound(confirm=False)


def test_decks_below_six_need_allow_test_decks() -> None:
    error = refused("shoe", b'{"decks": 1, "id": "s"}')
    assert "6 to 12 decks, not 1" in str(error)
    assert "allow_test_decks" in str(error)
    assert error.request_id == "s"
    assert parse_command("shoe", b'{"decks": 1}', test_decks=True)[0] == NewShoe(decks=1)
    assert parse_command("shoe", b'{"decks": 6}')[0] == NewShoe(decks=6)
    assert "decks" in str(refused("shoe", b'{"decks": 13}', test_decks=True))


def test_an_unknown_command_with_a_long_name_is_cut_short() -> None:
    error = refused("x" * 70_000, b"{}")
    assert "unknown command 'xxxx" in str(error)
    assert len(reply("x" * 70_000, None, str(error)).command) <= 40


def test_good_commands_still_parse() -> None:
    assert parse_command("open", b"{}") == (OpenRound(), None)
    assert parse_command("burn", b'{"count": 3, "id": 9007199254740991}') == (
        Burn(count=3),
        9007199254740991,
    )
