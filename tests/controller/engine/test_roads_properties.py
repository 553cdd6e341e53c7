"""Properties of the roads over random shoes (hypothesis)."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from baccarat.controller.engine.roads import Roads
from baccarat.messages.bodies import adapter
from baccarat.messages.roads import RoadsMessage
from baccarat.rules.tableau import Winner

DERIVED = ("big_eye_boy", "small_road", "cockroach_pig")

results = st.lists(
    st.tuples(
        st.sampled_from(["banker", "player", "tie"]),
        st.booleans(),
        st.booleans(),
        st.booleans(),
    ),
    max_size=90,
)
# Long streaks are what make tails collide; weight towards them.
streaky = st.lists(
    st.tuples(st.sampled_from(["banker", "player", "tie"]), st.integers(1, 12)),
    max_size=20,
).map(lambda runs: [(w, False, False, False) for w, n in runs for _ in range(n)])
shoes = st.one_of(results, streaky)


def build(shoe: list[tuple[str, bool, bool, bool]]) -> Roads:
    roads = Roads()
    for number, (winner, player_pair, banker_pair, natural) in enumerate(shoe, start=1):
        roads.add(number, winner, player_pair, banker_pair, natural)  # type: ignore[arg-type]
    return roads


def message(roads: Roads) -> RoadsMessage:
    return roads.message(seq=1, shoe=1, cards_left=100)


@given(shoes)
def test_ask_marks_of_each_derived_road_are_opposite_colours(shoe: list) -> None:
    ask = message(build(shoe)).ask
    for name in DERIVED:
        banker, player = getattr(ask.banker, name), getattr(ask.player, name)
        assert (banker is None) == (player is None)
        if banker is not None:
            assert {banker, player} == {"red", "blue"}


@given(shoes, st.sampled_from(["banker", "player"]))
def test_the_ask_row_is_the_mark_the_next_result_adds(shoe: list, side: Winner) -> None:
    roads = build(shoe)
    before = message(roads)
    asked = getattr(before.ask, side)
    roads.add(len(shoe) + 1, side, False, False, False)
    after = message(roads)
    for name in DERIVED:
        cells_before = getattr(before, name).cells
        cells_after = getattr(after, name).cells
        added = cells_after[-1].colour if len(cells_after) > len(cells_before) else None
        assert getattr(asked, name) == added


@given(shoes)
def test_bead_plate_has_one_cell_per_result(shoe: list) -> None:
    cells = message(build(shoe)).bead_plate.cells
    assert len(cells) == len(shoe)
    assert [(c.col, c.row) for c in cells] == [(i // 6, i % 6) for i in range(len(shoe))]
    assert [c.winner for c in cells] == [winner for winner, *_ in shoe]


@given(shoes)
def test_big_road_cells_are_the_non_tie_results(shoe: list) -> None:
    road = message(build(shoe)).big_road
    assert [c.winner for c in road.cells] == [w for w, *_ in shoe if w != "tie"]
    ties = sum(1 for w, *_ in shoe if w == "tie")
    if road.cells:
        assert sum(c.ties for c in road.cells) == ties
    else:
        assert road.leading_ties == ties


@given(shoes)
def test_columns_are_the_streaks(shoe: list) -> None:
    road = message(build(shoe)).big_road
    assert sum(c.length for c in road.columns) == len(road.cells)
    for left, right in zip(road.columns, road.columns[1:], strict=False):
        assert left.winner != right.winner
    for cell in road.cells:
        assert road.columns[cell.logical_col].winner == cell.winner


@given(shoes)
def test_drawn_cells_fit_the_grid_and_never_overlap(shoe: list) -> None:
    m = message(build(shoe))
    for road in (m.big_road, m.big_eye_boy, m.small_road, m.cockroach_pig):
        positions = [(c.col, c.row) for c in road.cells]
        assert len(set(positions)) == len(positions)
        assert all(0 <= row < 6 for _, row in positions)
        assert road.width == (max((col for col, _ in positions), default=-1) + 1)


@given(shoes)
def test_a_streak_goes_down_or_right_one_cell_at_a_time(shoe: list) -> None:
    m = message(build(shoe))
    for road in (m.big_road, m.big_eye_boy, m.small_road, m.cockroach_pig):
        for previous, cell in zip(road.cells, road.cells[1:], strict=False):
            if cell.logical_col != previous.logical_col:
                assert (cell.row, cell.logical_row) == (0, 0)
            else:
                step = (cell.col - previous.col, cell.row - previous.row)
                assert step in {(0, 1), (1, 0)}


@given(shoes)
def test_derived_roads_have_one_mark_per_big_road_cell_past_the_start(shoe: list) -> None:
    m = message(build(shoe))
    for name, k in zip(DERIVED, (1, 2, 3), strict=True):
        expected = sum(
            1
            for c in m.big_road.cells
            if c.logical_col > k or (c.logical_col == k and c.logical_row > 0)
        )
        assert len(getattr(m, name).cells) == expected


@given(shoes, st.data())
def test_remove_equals_never_having_added(shoe: list, data: st.DataObject) -> None:
    assume(shoe)
    gone = data.draw(st.integers(1, len(shoe)))
    roads = build(shoe)
    assert roads.remove(gone)
    fresh = Roads()
    for number, (winner, pp, bp, nat) in enumerate(shoe, start=1):
        if number != gone:
            fresh.add(number, winner, pp, bp, nat)
    assert message(roads) == message(fresh)


@settings(max_examples=50)
@given(shoes)
def test_every_message_validates_against_its_own_schema(shoe: list) -> None:
    m = message(build(shoe))
    roads_adapter = adapter(RoadsMessage)
    assert roads_adapter.validate_json(m.to_json()) == m
    assert roads_adapter.validate_python(roads_adapter.dump_python(m, by_alias=True)) == m


@given(shoes)
def test_statistics_add_up(shoe: list) -> None:
    m = message(build(shoe))
    s = m.stats
    assert s.rounds == len(shoe) == s.banker + s.player + s.tie
    assert s.banker_pairs == sum(1 for _, _, bp, _ in shoe if bp)
    assert s.player_pairs == sum(1 for _, pp, _, _ in shoe if pp)
    for side in ("banker", "player"):
        lengths = [c.length for c in m.big_road.columns if c.winner == side]
        assert getattr(s, f"longest_{side}_streak") == max(lengths, default=0)
