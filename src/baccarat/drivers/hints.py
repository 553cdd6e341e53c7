"""What rejected bytes suggest: another protocol, or another line speed.

Shared by ``baccarat listen`` (printed once, under the rejected bytes) and the daemon (in
its log line for a ``bad_data`` alarm), so that both say the same thing of the same bytes:

* ``framed`` flags (``0x7E``) heard with ``protocol = line``: the shoe speaks ``framed``;
* card-code lines (``A01`` CR LF) heard with ``protocol = framed``: the shoe speaks ``line``;
* mostly bytes that are neither text nor flags: the line speed (baud) may not be the
  shoe's (a mismatched speed turns every byte into noise, many of them 0x80 and above).
"""

from __future__ import annotations

import re
from typing import Final

from baccarat.drivers.framed_wire import FLAG

LINE_CARD: Final = re.compile(rb"[AHCD](0[1-9]|1[0-3])\r?\n")
"""A card code of the ``line`` protocol, as it appears in rejected bytes."""
NOISE_SHARE: Final = 0.5
"""Share of bytes outside printable ASCII (and CR, LF) over which the bytes look like a
wrong line speed rather than a wrong protocol."""
NOISE_MIN: Final = 8
"""Bytes needed before a line speed is suspected."""


def protocol_hint(protocol: str, data: bytes, *, option: str = "--protocol") -> str | None:
    """A hint when ``data`` (rejected bytes) looks like the other protocol, or None.

    ``option`` is how the setting is named to the reader: ``--protocol`` for the command
    line, ``protocol =`` for the daemon's configuration file.
    """
    if protocol == "line" and data.count(FLAG) >= 2:
        return ("these bytes look like framed frames (0x7E flags), not card-code lines: "
                f"try {_setting(option, 'framed')}")
    if protocol == "framed" and LINE_CARD.search(data):
        return ("these bytes look like card-code lines (A01 CR LF), not frames: "
                f"try {_setting(option, 'line')}")
    return None


def baud_hint(data: bytes, baud: int, *, option: str = "--baud") -> str | None:
    """A hint when ``data`` is mostly noise, as bytes read at the wrong speed are."""
    if len(data) < NOISE_MIN or data.count(FLAG) >= 2:
        return None
    noise = sum(1 for b in data if not (32 <= b < 127 or b in (10, 13)))
    if noise / len(data) <= NOISE_SHARE:
        return None
    return (f"these bytes are mostly noise ({noise} of {len(data)} not text): the line "
            f"speed may not be the shoe's; {baud} baud is set, check the shoe's "
            f"({_setting(option, '<speed>')})")


def rejected_hint(protocol: str, data: bytes, baud: int | None, *, config: bool) -> str | None:
    """The protocol hint, else (for a serial line, ``baud`` given) the line-speed hint."""
    hint = protocol_hint(protocol, data, option="protocol =" if config else "--protocol")
    if hint is None and baud is not None:
        hint = baud_hint(data, baud, option="baud =" if config else "--baud")
    return hint


def _setting(option: str, value: str) -> str:
    if option.endswith("="):
        return f'{option} "{value}"' if not value.startswith("<") else f"{option} {value}"
    return f"{option} {value}"
