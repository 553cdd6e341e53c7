"""Decoder throughput, in MB/s, for every codec on clean and on noisy input.

    .venv/bin/python bench/decode.py [--shoes N] [--chunk BYTES] [--repeat N]

The input is what a shoe sends for ``--shoes`` dealt 8-deck shoes (cards, and for codecs
that carry them buttons, cut card, shoe in/out), encoded by the codec's own encoder. The
noisy input is the same stream through the simulators' fault injector: garbage before
5% of the frames, a flipped bit in 5%, 1% dropped (for ``framed``, each spoiled frame is
then sent again, as the device's retransmission would). Each run feeds a fresh decoder in
chunks of ``--chunk`` bytes (a serial read returns at most 1024; 4096 by default) and
collects its acknowledgements; the best of ``--repeat`` runs is reported.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable

from baccarat.drivers.codec import Codec, codec_names, get_codec
from baccarat.drivers.events import DeviceEvent
from baccarat.drivers.framed import FramedEncoder
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.faults import FaultInjector, FaultPlan

NOISE = FaultPlan(seed=99, garbage_rate=0.05, bit_flip_rate=0.05, drop_rate=0.01)


def shoe_events(shoes: int, codec: Codec) -> list[DeviceEvent]:
    """The events of ``shoes`` dealt shoes that ``codec`` can carry."""
    events: list[DeviceEvent] = []
    for seed in range(shoes):
        dealer = Dealer(decks=8, seed=seed, buttons=DealerButtonCarried(codec))
        events += dealer.events(codec.carries)
    return events


def DealerButtonCarried(codec: Codec) -> bool:  # noqa: N802 - reads as a question
    """Whether the codec carries dealer buttons."""
    return any(t.__name__ == "DealerButton" for t in codec.carries)


def encode(codec: Codec, events: Iterable[DeviceEvent], plan: FaultPlan | None) -> bytes:
    """The wire bytes of ``events``, through the fault injector if ``plan``.

    A codec with acknowledgements (``framed``) gets a spoiled frame sent again right after
    it, as the device's retransmission would; ``line`` cards spoiled are lost.
    """
    encoder = codec.encoder()
    injector = FaultInjector(plan)
    retransmits = codec.heartbeat_timeout is not None
    chunks: list[bytes] = []
    if isinstance(encoder, FramedEncoder):  # a device starts with one: it places the host
        chunks.append(encoder.hello(1))
    for event in events:
        frame = encoder.encode(event)
        writes = injector.apply(frame)
        chunks += writes
        if retransmits and not b"".join(writes).endswith(frame):
            chunks.append(frame)
    chunks += injector.flush()
    return b"".join(chunks)


def run_once(codec: Codec, stream: bytes, chunk: int) -> tuple[float, int, int]:
    """Seconds to decode ``stream``; events out; rejected bytes."""
    decoder = codec.decoder()
    pieces = [stream[i : i + chunk] for i in range(0, len(stream), chunk)]
    events = 0
    started = time.perf_counter()
    for piece in pieces:
        events += len(decoder.feed(piece))
        decoder.pending_output()
    elapsed = time.perf_counter() - started
    return elapsed, events, decoder.counters["rejected_bytes"]


def main() -> None:
    """Print one line per codec and input."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=20)
    parser.add_argument("--chunk", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'codec':<8}{'input':<7}{'bytes':>10}{'MB/s':>8}{'events/s':>12}{'rejected':>10}")
    for name in codec_names():
        codec = get_codec(name)
        events = shoe_events(args.shoes, codec)
        for label, plan in (("clean", None), ("noisy", NOISE)):
            stream = encode(codec, events, plan)
            runs = [run_once(codec, stream, args.chunk) for _ in range(args.repeat)]
            report(name, label, stream, min(runs))


def report(name: str, label: str, stream: bytes, run: tuple[float, int, int]) -> None:
    """One line of the table."""
    elapsed, decoded, rejected = run
    print(
        f"{name:<8}{label:<7}{len(stream):>10}{len(stream) / elapsed / 1e6:>8.1f}"
        f"{decoded / elapsed:>12,.0f}{rejected:>10}"
    )


if __name__ == "__main__":
    main()
