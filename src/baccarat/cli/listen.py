"""``baccarat listen``: print what a device sends, decoded, and the link's counters.

The first thing to run when wiring a new shoe::

    baccarat listen --device /dev/serial/by-id/usb-FTDI_shoe-if00 --protocol line
    baccarat listen --device socket://10.0.0.7:4001 --protocol framed --baud 115200

Every event is printed as it arrives (cards, buttons, rejected bytes in hex with the
reason, link up and down); the counters are printed every ``--counters-every`` seconds,
when the link goes down and at the end. ``--count N`` stops after N cards. When the
rejected bytes look like the other protocol (``framed`` flags heard with ``--protocol
line``, card-code lines with ``--protocol framed``), a hint says so, once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import sys
from typing import TextIO

from baccarat.drivers.codec import codec_names
from baccarat.drivers.events import (
    CardDrawn,
    DeviceEvent,
    DeviceFault,
    LinkDown,
    LinkUp,
    Rejected,
    UnreadableCard,
)
from baccarat.drivers.hints import rejected_hint
from baccarat.drivers.serial_source import SerialSource


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``baccarat listen``."""
    parser.add_argument("--device", required=True, help="device path or socket://host:port")
    parser.add_argument("--protocol", choices=codec_names(), default="line",
                        help="the wire protocol: line (card codes, one a line) or framed"
                        " (0x7E frames, acknowledged) (line)")
    parser.add_argument("--baud", type=int, default=9600, help="line speed, 8N1 (9600)")
    parser.add_argument(
        "--counters-every",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="print the counters this often (0: only on link down and at the end)",
    )
    parser.add_argument("--count", type=int, default=0, help="stop after this many cards")
    parser.add_argument(
        "--debug", action="store_true", help="print the recent traffic in hex on link down"
    )


def run(args: argparse.Namespace) -> int:
    """Listen until interrupted (or until ``--count`` cards)."""
    return asyncio.run(
        listen(
            args.device,
            args.protocol,
            baud=args.baud,
            counters_every=args.counters_every,
            count=args.count,
            debug=args.debug,
        )
    )


async def listen(
    device: str,
    protocol: str,
    *,
    baud: int = 9600,
    counters_every: float = 10.0,
    count: int = 0,
    debug: bool = False,
    out: TextIO = sys.stdout,
) -> int:
    """Print the events of ``device`` as they arrive; return 0."""
    link = SerialSource(device, protocol, baud=baud)
    print(f"listening to {device} ({protocol}, {baud} baud 8N1); Ctrl-C to stop", file=out)
    cards = 0
    hinted = False
    async with link, asyncio.TaskGroup() as group:
        ticker = group.create_task(_print_counters(link, counters_every, out), name="counters")
        try:
            async for event in link:
                print(describe(event), file=out, flush=True)
                hint = None if hinted else protocol_hint(protocol, event, baud)
                if hint is not None:
                    print(hint, file=out, flush=True)
                    hinted = True
                if isinstance(event, LinkDown):
                    print_counters(link, out)
                    if debug:
                        print(link.dump_debug(), file=out, flush=True)
                cards += isinstance(event, CardDrawn)
                if count and cards >= count:
                    break
        finally:
            ticker.cancel()
            print_counters(link, out)
    return 0


async def _print_counters(link: SerialSource, every: float, out: TextIO) -> None:
    if every <= 0:
        return
    with contextlib.suppress(asyncio.CancelledError):
        while True:
            await asyncio.sleep(every)
            print_counters(link, out)


def print_counters(link: SerialSource, out: TextIO) -> None:
    """One line with the link's counters that are not zero."""
    counters = " ".join(f"{k}={v}" for k, v in link.counters.items() if v)
    print(f"{_now()} counters: {counters or 'all zero'}", file=out, flush=True)


def protocol_hint(protocol: str, event: DeviceEvent, baud: int | None = None) -> str | None:
    """A hint when ``event`` holds rejected bytes that look like the other protocol.

    Or, with ``baud``, bytes that look read at the wrong line speed
    (:mod:`baccarat.drivers.hints`, which the daemon's log uses too).
    """
    if not isinstance(event, Rejected):
        return None
    hint = rejected_hint(protocol, event.data, baud, config=False)
    return None if hint is None else f"hint: {hint}"


def describe(event: DeviceEvent) -> str:
    """One line for a person: time, sequence number, what happened."""
    seq = f"#{event.seq:<3d} " if event.seq is not None else ""
    return f"{_now()} {seq}{_what(event)}"


def _what(event: DeviceEvent) -> str:
    if isinstance(event, Rejected):
        return f"REJECTED [{event.hex}]: {event.reason}"
    if isinstance(event, UnreadableCard):
        return f"UNREADABLE CARD [{event.raw.hex(' ')}]"
    if isinstance(event, DeviceFault):
        return f"DEVICE FAULT 0x{event.code:04X}: {event.text}"
    if isinstance(event, LinkUp):
        return f"LINK UP: {event.detail}"
    if isinstance(event, LinkDown):
        return f"LINK DOWN: {event.reason}"
    return str(event)


def _now() -> str:
    return datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3]
