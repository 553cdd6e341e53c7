"""examples/udev/99-baccarat-shoe.rules is well formed and names the shoe as documented.

systemd 252's udevadm has no ``verify`` (253 added it) and ``udevadm test`` reads only the
machine's own rule folders, so the rules are checked here against udev(7)'s syntax: each
rule is comma-separated ``KEY[{attribute}] OPERATOR "value"``, matches with ``==``/``!=``,
assignments with ``=``, ``+=``, ``-=``, ``:=``, on keys udev knows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[2] / "examples" / "udev" / "99-baccarat-shoe.rules"
ITEM = re.compile(r'\s*([A-Z]+)(?:\{([^}]+)\})?\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*')
MATCH_KEYS = {"SUBSYSTEM", "SUBSYSTEMS", "KERNEL", "KERNELS", "ATTR", "ATTRS", "ENV", "ACTION"}
ASSIGN_KEYS = {"SYMLINK", "GROUP", "MODE", "OWNER", "TAG", "ENV", "RUN"}


def parse(rule: str) -> list[tuple[str, str | None, str, str]]:
    """The rule's items, or a failed test naming what is wrong."""
    items, at = [], 0
    while at < len(rule):
        item = ITEM.match(rule, at)
        if item is None:
            pytest.fail(f"not a udev rule item at {rule[at:]!r}")
        key, attribute, op, value = item.groups()
        if op in ("==", "!="):
            assert key in MATCH_KEYS, f"{key} cannot be matched"
        else:
            assert key in ASSIGN_KEYS, f"{key}{op} is not an assignment udev knows"
        items.append((key, attribute, op, value))
        at = item.end()
        if at < len(rule):
            assert rule[at] == ",", f"items must be separated by commas: {rule[at:]!r}"
            at += 1
    return items


def rules(*, commented: bool = False) -> list[str]:
    """The rule lines; with ``commented``, also the example rules left commented out."""
    found = []
    for line in RULES.read_text().splitlines():
        rule = line[1:] if commented and re.match(r"#[A-Z]", line) else line
        if rule and not rule.startswith("#"):
            found.append(rule)
    return found


def test_the_shoe_rule_names_it_by_usb_ids() -> None:
    active = rules()
    assert len(active) == 1
    items = parse(active[0])
    assert ("SUBSYSTEM", None, "==", "tty") in items
    assert ("SYMLINK", None, "+=", "baccarat-shoe") in items
    assert ("GROUP", None, "=", "dialout") in items
    ids = {attribute: value for key, attribute, op, value in items if key == "ATTRS"}
    assert re.fullmatch(r"[0-9a-f]{4}", ids["idVendor"])
    assert re.fullmatch(r"[0-9a-f]{4}", ids["idProduct"])


def test_every_example_rule_parses() -> None:
    assert len(rules(commented=True)) == 5
    for rule in rules(commented=True):
        parse(rule)


def test_the_usual_usb_serial_adapters_are_covered_by_id() -> None:
    """FTDI (FT232R, FT-X), Silicon Labs CP210x and WCH CH340, each a shoe's tty rule."""
    covered = {}
    for rule in rules(commented=True):
        items = parse(rule)
        if ("SUBSYSTEM", None, "==", "tty") not in items:
            continue
        assert ("SYMLINK", None, "+=", "baccarat-shoe") in items
        ids = {attribute: value for key, attribute, op, value in items if key == "ATTRS"}
        covered[ids["idVendor"], ids["idProduct"]] = ids.get("serial")
    assert set(covered) == {("0403", "6001"), ("0403", "6015"), ("10c4", "ea60"), ("1a86", "7523")}
    assert covered["1a86", "7523"] is None  # a CH340 has no serial: matched by its port


def test_the_check_has_teeth() -> None:
    with pytest.raises(AssertionError, match="SYMLINK cannot be matched"):
        parse('SUBSYSTEM=="tty", SYMLINK=="baccarat-shoe"')
    with pytest.raises(AssertionError, match="items must be separated by commas"):
        parse('SUBSYSTEM=="tty" SYMLINK+="baccarat-shoe"')
    with pytest.raises(pytest.fail.Exception, match="not a udev rule item"):
        parse('SUBSYSTEM=="tty", SYMLINK+=baccarat-shoe')
