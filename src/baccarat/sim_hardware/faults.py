"""Fault injection for simulated devices: bad cables, noisy lines, careless technicians.

What they do to the bytes between a device and the host.
A :class:`FaultPlan` says what goes wrong and how often; a :class:`FaultInjector` applies
it, frame by frame, deterministically from the plan's seed. It knows nothing of ptys or
protocols: it turns each frame the device wants to write into the writes that really
happen (none if dropped, two if split, one bigger one if merged with the next, garbage
before it, a bit flipped in it). Unplugging is the device's business; the injector only
says when (:meth:`FaultInjector.unplug_due`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Final

SPLIT_GAP: Final = 0.002
"""Seconds between the two halves of a split write (the simulator sleeps this long)."""


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """What goes wrong on the wire. Rates are probabilities per frame, 0..1."""

    seed: int = 0
    garbage_rate: float = 0.0
    """Random bytes (1..``garbage_max``) written before a frame."""
    garbage_max: int = 16
    bit_flip_rate: float = 0.0
    """One random bit of the frame inverted."""
    split_rate: float = 0.0
    """The frame written in two parts, :data:`SPLIT_GAP` apart."""
    merge_rate: float = 0.0
    """The frame held back and written together with the next one."""
    drop_rate: float = 0.0
    """The frame never written (lost on the wire)."""
    unplug_after_frames: tuple[int, ...] = field(default=())
    """Unplug once each of these many frames have been written."""
    unplug_seconds: float = 1.0
    """How long an unplug lasts before the device comes back (new pty, same symlink)."""

    @property
    def is_clean(self) -> bool:
        """True when the plan injects nothing."""
        rates = (
            self.garbage_rate,
            self.bit_flip_rate,
            self.split_rate,
            self.merge_rate,
            self.drop_rate,
        )
        return not any(rates) and not self.unplug_after_frames


class FaultInjector:
    """Applies a :class:`FaultPlan` to a device's frames, deterministically from its seed."""

    def __init__(self, plan: FaultPlan | None = None) -> None:
        self.plan = plan or FaultPlan()
        self._rng = random.Random(self.plan.seed)
        self._held = b""
        self._unplugs = sorted(self.plan.unplug_after_frames)
        self.frames = 0
        self.counters: dict[str, int] = dict.fromkeys(
            ("garbage_bytes", "bit_flips", "splits", "merges", "drops", "unplugs"), 0
        )

    def apply(self, frame: bytes) -> list[bytes]:
        """The writes that really happen for ``frame``, in order (maybe none)."""
        self.frames += 1
        plan, rng = self.plan, self._rng
        if plan.is_clean:
            return [frame]
        if plan.drop_rate and rng.random() < plan.drop_rate:
            self.counters["drops"] += 1
            return self._release([])
        if plan.bit_flip_rate and frame and rng.random() < plan.bit_flip_rate:
            frame = self._flip(frame)
        if plan.garbage_rate and rng.random() < plan.garbage_rate:
            frame = self._garbage() + frame
        if plan.merge_rate and rng.random() < plan.merge_rate:
            self.counters["merges"] += 1
            self._held += frame
            return []
        if plan.split_rate and len(frame) > 1 and rng.random() < plan.split_rate:
            self.counters["splits"] += 1
            cut = rng.randrange(1, len(frame))
            return self._release([frame[:cut], frame[cut:]])
        return self._release([frame])

    def flush(self) -> list[bytes]:
        """Bytes held back for merging, to write now that nothing else is coming."""
        return self._release([])

    def unplug_due(self) -> bool:
        """True once each time the frame count reaches a planned unplug."""
        if self._unplugs and self.frames >= self._unplugs[0]:
            self._unplugs.pop(0)
            self.counters["unplugs"] += 1
            return True
        return False

    def _release(self, writes: list[bytes]) -> list[bytes]:
        if not self._held:
            return writes
        held, self._held = self._held, b""
        if not writes:
            return [held]
        return [held + writes[0], *writes[1:]]

    def _flip(self, frame: bytes) -> bytes:
        self.counters["bit_flips"] += 1
        flipped = bytearray(frame)
        bit = self._rng.randrange(len(frame) * 8)
        flipped[bit // 8] ^= 1 << (bit % 8)
        return bytes(flipped)

    def _garbage(self) -> bytes:
        size = self._rng.randint(1, max(1, self.plan.garbage_max))
        self.counters["garbage_bytes"] += size
        return self._rng.randbytes(size)
