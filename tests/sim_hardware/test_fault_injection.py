"""The fault injector: what reaches the wire for each frame."""

from __future__ import annotations

from baccarat.sim_hardware.faults import FaultInjector, FaultPlan

FRAMES = [bytes([0x7E, i, i + 1, i + 2, 0x7E]) for i in range(200)]


def wire(injector: FaultInjector) -> list[bytes]:
    writes: list[bytes] = []
    for frame in FRAMES:
        writes += injector.apply(frame)
    return writes + injector.flush()


def test_a_clean_plan_writes_every_frame_as_it_is() -> None:
    injector = FaultInjector()
    assert wire(injector) == FRAMES
    assert not any(injector.counters.values())


def test_drops_lose_whole_frames() -> None:
    injector = FaultInjector(FaultPlan(seed=1, drop_rate=0.2))
    writes = wire(injector)
    assert set(writes) <= set(FRAMES)
    assert len(writes) == len(FRAMES) - injector.counters["drops"] > 0


def test_split_writes_keep_the_bytes() -> None:
    injector = FaultInjector(FaultPlan(seed=2, split_rate=0.5))
    writes = wire(injector)
    assert b"".join(writes) == b"".join(FRAMES)
    assert len(writes) == len(FRAMES) + injector.counters["splits"]


def test_merged_writes_keep_the_bytes() -> None:
    injector = FaultInjector(FaultPlan(seed=3, merge_rate=0.5))
    writes = wire(injector)
    assert b"".join(writes) == b"".join(FRAMES)
    assert len(writes) < len(FRAMES)


def test_bit_flips_change_exactly_one_bit() -> None:
    injector = FaultInjector(FaultPlan(seed=4, bit_flip_rate=1.0))
    for frame, written in zip(FRAMES, wire(injector), strict=True):
        difference = int.from_bytes(frame, "big") ^ int.from_bytes(written, "big")
        assert difference.bit_count() == 1


def test_garbage_goes_before_frames() -> None:
    injector = FaultInjector(FaultPlan(seed=5, garbage_rate=0.3, garbage_max=8))
    writes = wire(injector)
    assert all(w.endswith(f) for w, f in zip(writes, FRAMES, strict=True))
    extra = sum(len(w) for w in writes) - sum(len(f) for f in FRAMES)
    assert extra == injector.counters["garbage_bytes"] > 0


def test_same_seed_same_faults() -> None:
    plan = FaultPlan(seed=6, drop_rate=0.1, bit_flip_rate=0.1, garbage_rate=0.1, split_rate=0.1)
    assert wire(FaultInjector(plan)) == wire(FaultInjector(plan))


def test_unplugs_are_due_once_each() -> None:
    injector = FaultInjector(FaultPlan(unplug_after_frames=(3, 5)))
    due = []
    for frame in FRAMES[:10]:
        injector.apply(frame)
        due.append(injector.unplug_due())
    assert due == [False, False, True, False, True, False, False, False, False, False]
