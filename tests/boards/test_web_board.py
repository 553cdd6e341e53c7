"""The web board in a real browser: headless Debian Chromium against a real mosquitto.

The page is served by ``baccarat board --web``'s server and subscribes over
MQTT-over-WebSocket. Two shoes:

* the real daemon (``baccarat run``) reads a full 8-deck shoe from a virtual framed shoe on
  a pty; the page must end with the roads and counts of ``baccarat roads --json`` run on
  the daemon's own journal, cell by cell, and follow the daemon's online/offline status;
* a seeded shoe with an unreadable card mid-shoe (accepted as a burn) is replayed by
  ``baccarat replay`` and its bodies published in steps, as the daemon publishes them, on
  a broker with the accounts and ACL of ``examples/mosquitto`` (the page logs in as the
  table's board account):
  the alarm banner comes and goes, the live round shows its cards, and the roads match
  mid-shoe and at the end.

Screenshots go to ``artifacts/web-board/`` (gitignored). The file server and ``baccarat board
--web`` are tested without a browser at the end.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import signal
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from baccarat.boards.web_server import WebBoardServer, page_config
from baccarat.controller.publisher import status_payload
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from boards.chromium_cdp import Chromium
from boards.web_pages import (
    PREFIX,
    READ_BOARD,
    ROOT,
    TABLE,
    WAIT,
    Shoe,
    artifacts_folder,
    baccarat,
    caught_up,
    in_chromium,
    index_where,
    last_roads,
    publish,
    replayed_shoe,
)
from support.daemon import Daemon, Recorder
from support.mosquitto import MosquittoFactory

pytestmark = pytest.mark.xdist_group("web_board")  # module fixtures: one worker

DAEMON_SEED = 42
DAEMON_RULES = {"open_mode": "explicit"}  # the framed shoe's buttons open the rounds
SHOE_TIMEOUT = 90.0  # seconds for the daemon to play a whole shoe on a loaded machine
SNAPSHOT_ROUND = 52  # the mid-shoe screenshot: this round dealt up to B2
EXAMPLE_ACL = (ROOT / "examples" / "mosquitto" / "acl").read_text().replace("T07", TABLE)
CONTROLLER, BOARD = f"baccarat-{TABLE}", f"board-{TABLE}"  # the example ACL's, for TABLE
USERS = {CONTROLLER: "c0ntroller", BOARD: "b0ard"}
ROADS = ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig")
STATS = (
    "banker",
    "player",
    "tie",
    "banker_pairs",
    "player_pairs",
    "naturals",
    "rounds",
    "longest_banker_streak",
    "longest_player_streak",
    "cards_left",
)


@pytest.fixture(scope="module")
def shoe(tmp_path_factory: pytest.TempPathFactory) -> Shoe:
    return replayed_shoe(tmp_path_factory.mktemp("shoe"))


@pytest.fixture
def artifacts() -> Path:
    return artifacts_folder()


def expected_cells(road: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """A road's cells as the page's data attributes give them; naturals marked on the bead plate."""
    return [
        {
            "col": c["col"],
            "row": c["row"],
            "round": c["round"],
            "colour": c.get("colour") or c["winner"],
            "ties": c.get("ties", 0),
            "banker_pair": c.get("banker_pair", False),
            "player_pair": c.get("player_pair", False),
            "natural": c.get("natural", False),
            "marked": name == "bead_plate" and c["natural"],
        }
        for c in road["cells"]
    ]


def assert_roads_match(board: dict[str, Any], roads: dict[str, Any]) -> None:
    """Every road cell, width, ask mark and count on the page is the message's."""
    for name in ROADS:
        assert board["roads"][name] == expected_cells(roads[name], name), name
        assert board["widths"][name] == roads[name]["width"], name
    assert board["ask"] == roads["ask"]
    stats = roads["stats"]
    assert {key: board["stats"][key] for key in STATS} == {key: str(stats[key]) for key in STATS}
    streak = stats["current_streak"]
    assert board["streak"]["winner"] == (streak["winner"] if streak else "")
    assert board["streak"]["length"] == str(streak["length"] if streak else 0)


def shoe_closed(recorder: Recorder) -> bool:
    """The shoe ended and the last round's messages (shoe, roads, recall) all arrived."""
    bodies = recorder.bodies()
    closed = [i for i, b in enumerate(bodies) if b.get("type") == "shoe" and b["phase"] == "closed"]
    return bool(closed) and any(b.get("type") == "recall" for b in bodies[closed[-1] :])


def journal_roads(daemon: Daemon, folder: Path) -> dict[str, Any]:
    """``baccarat roads --json`` of the daemon's journal, under the daemon's rules."""
    journal = daemon.journal_files()[-1]
    inputs = folder / "journal-inputs.txt"
    inputs.write_text(baccarat("journal", "show", str(journal), "--replay"), encoding="utf-8")
    profile = folder / "rules.toml"
    rules = [f"{key} = {json.dumps(value)}" for key, value in DAEMON_RULES.items()]
    profile.write_text("\n".join(["[profile]", 'base = "macau"', 'name = "macau"', *rules]))
    roads: dict[str, Any] = json.loads(
        baccarat("roads", "--json", "--profile", str(profile), str(inputs), refused_ok=True)
    )
    return roads


@pytest.mark.slow
@in_chromium
async def test_a_shoe_played_through_the_daemon(
    mosquitto_factory: MosquittoFactory, tmp_path: Path, artifacts: Path
) -> None:
    broker = mosquitto_factory(websockets=True)
    (tmp_path / "daemon").mkdir()
    shoe_path = str(tmp_path / "serial-by-id-shoe")
    daemon = Daemon(tmp_path / "daemon", broker, device=shoe_path, rules=DAEMON_RULES)
    config = page_config(broker.host, broker.websockets_port, daemon.table, PREFIX)
    try:
        async with (
            VirtualShoe(shoe_path, "framed", baud=115200) as shoe,
            WebBoardServer(config) as server,
            Recorder(broker, table=daemon.table) as recorder,
            Chromium.launch(tmp_path / "chromium") as browser,
        ):
            page = await browser.open(server.url, width=1920, height=1080)
            await page.wait_for("document.body.dataset.link === 'connected'", limit=WAIT)
            await asyncio.to_thread(daemon.start)
            await page.wait_for("!!document.querySelector('[data-controller=online]')", limit=WAIT)
            await shoe.play(Dealer(decks=8, seed=DAEMON_SEED).events())
            await recorder.wait_for(shoe_closed, SHOE_TIMEOUT)
            board = await caught_up(page, max(recorder.by_seq()))
            roads = journal_roads(daemon, tmp_path)
            assert roads["stats"]["rounds"] > 60
            assert_roads_match(board, roads)
            result = recorder.bodies("result")[-1]
            assert board["result"] == {"round": result["round"], "winner": result["winner"]}
            assert board["banner"]["hidden"]
            assert board["table"] == daemon.table
            assert board["rejected"] == 0
            await page.screenshot(artifacts / "web-board-daemon-shoe.png")
            assert await asyncio.to_thread(daemon.stop) == 0
            await page.wait_for("!!document.querySelector('[data-controller=offline]')", limit=WAIT)
            assert page.console == []
    finally:
        daemon.close()


@pytest.mark.slow
@in_chromium
async def test_a_replayed_shoe_step_by_step(
    mosquitto_factory: MosquittoFactory, tmp_path: Path, shoe: Shoe, artifacts: Path
) -> None:
    broker = mosquitto_factory(websockets=True, anonymous=False, users=USERS, acl=EXAMPLE_ACL)
    config = page_config(
        broker.host, broker.websockets_port, TABLE, PREFIX, username=BOARD, password="b0ard"
    )
    async with (
        WebBoardServer(config) as server,
        broker.client(username=CONTROLLER, password="c0ntroller") as client,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        status = f"{PREFIX}/{TABLE}/status"
        await client.publish(status, status_payload("online", TABLE), qos=1, retain=True)
        page = await browser.open(server.url, width=1920, height=1080)
        pit = await browser.open(f"{server.url}?view=pit", width=1280, height=720)
        for each in (page, pit):
            await each.wait_for("document.body.dataset.link === 'connected'", limit=WAIT)
            await each.wait_for("!!document.querySelector('[data-controller=online]')", limit=WAIT)

        # Up to the unreadable card: the players' notice shows, and the pit's view the
        # alarm; the pit's correction clears both.
        alarm = index_where(shoe, 0, type="alarm")
        sent = await publish(client, shoe, 0, alarm + 1)
        board = await caught_up(page, shoe.messages[sent - 1]["seq"])
        assert board["banner"] == {"hidden": False, "alarms": 1, "kind": "unreadable_card"}
        assert board["notice"] == "round"
        pit_board = await caught_up(pit, shoe.messages[sent - 1]["seq"])
        assert pit_board["banner"] == board["banner"]
        assert pit_board["notice"] == ""
        cleared = index_where(shoe, sent, type="alarm_cleared")
        sent = await publish(client, shoe, sent, cleared + 1)
        board = await caught_up(page, shoe.messages[sent - 1]["seq"])
        assert board["banner"]["hidden"]
        assert (await caught_up(pit, shoe.messages[sent - 1]["seq"]))["banner"]["hidden"]

        # Mid-shoe, mid-round: the live round card by card, roads as last published.
        b2 = index_where(shoe, sent, type="card", round=SNAPSHOT_ROUND, position="B2")
        sent = await publish(client, shoe, sent, b2 + 1)
        board = await caught_up(page, shoe.messages[sent - 1]["seq"])
        assert_roads_match(board, last_roads(shoe, sent))
        dealt = {
            m["position"]: m["card"]
            for m in shoe.messages[:sent]
            if m["type"] == "card" and m["round"] == SNAPSHOT_ROUND
        }
        assert board["live"]["round"] == SNAPSHOT_ROUND
        assert board["live"]["status"] == "open"
        assert {p: c for p, c in board["live"]["cards"].items() if c} == dealt
        await page.screenshot(artifacts / "web-board-mid-shoe.png")

        # The rest of the shoe, with the cards that come out after it ended.
        sent = await publish(client, shoe, sent, len(shoe.messages))
        board = await caught_up(page, shoe.messages[sent - 1]["seq"])
        assert_roads_match(board, shoe.final_roads)
        assert_roads_match(board, last_roads(shoe, sent))
        result = next(m for m in reversed(shoe.messages) if m["type"] == "result")
        assert board["result"] == {"round": result["round"], "winner": result["winner"]}
        assert board["live"]["round"] == result["round"]
        assert board["live"]["winner"] == result["winner"]
        assert board["live"]["totals"] == [
            str(result["player"]["total"]),
            str(result["banker"]["total"]),
        ]
        # Cards drawn after the shoe ended: alarms that nothing settles, for the pit only.
        late = [m for m in shoe.messages if m["type"] == "alarm" and m["kind"] == "shoe_closed"]
        assert late
        assert board["banner"] == {"hidden": True, "alarms": 0, "kind": ""}
        pit_board = await caught_up(pit, shoe.messages[sent - 1]["seq"])
        assert pit_board["banner"] == {"hidden": False, "alarms": len(late), "kind": "shoe_closed"}
        await pit.screenshot(artifacts / "web-board-pit-end-of-shoe.png")
        assert board["table"] == TABLE
        assert board["rejected"] == 0
        await page.screenshot(artifacts / "web-board-end-of-shoe.png")

        # Copies of old messages, as after a reconnect with QoS 1, change nothing (copies
        # within SEQ_RESTART_GAP of the newest: further back is a restarted controller); then the
        # controller goes offline (published after them, so drawn after them).
        await publish(client, shoe, len(shoe.messages) // 2, len(shoe.messages))  # in the gap
        await client.publish(status, status_payload("offline", TABLE), qos=1, retain=True)
        await page.wait_for("!!document.querySelector('[data-controller=offline]')", limit=WAIT)
        offline = {**board, "controller": "offline", "overlay": "offline"}
        assert await page.evaluate(READ_BOARD) == offline

        # The toggle cycles through the languages, back to English and Traditional Chinese.
        languages = []
        for _ in range(5):
            await page.evaluate("document.getElementById('language-toggle').click()")
            languages.append(await page.evaluate("document.body.dataset.lang"))
        assert languages == ["en", "zh-Hant", "zh-Hans", "both-Hans", "both"]
        assert page.console == []
        assert pit.console == []


# What web/state.js does with tricky sequences: run in the page, with hand-made bodies.
FOLD_CHECKS = """(async () => {
  const { emptyState, fold, cardsLeft, currentRoads, lastResult, blockingAlarms } =
    await import('/state.js');
  const all = (state, messages) => messages.reduce(fold, state);
  const shoe = (seq, number) => ({type: 'shoe', seq, shoe: number, phase: 'ready',
    cards_left: 400, last_round: false});
  const card = (seq, round, position, code) => ({type: 'card', seq, shoe: 1, round, position,
    card: code, player_total: null, banker_total: null, demo: false});
  const hand = (cards, total) => ({cards, total, natural: false, pair: false});
  const result = (seq, round, winner) => ({type: 'result', seq, shoe: 1, round,
    round_id: `1-${round}`, winner, player: hand(['2S', '3S'], 5),
    banker: hand(['4S', '3H'], 7), demo: false, exposed: []});
  const alarm = (seq, id) => ({type: 'alarm', seq, id, kind: 'extra_card', shoe: 1, round: 1,
    text: 'x'});
  const roads = (seq, number, left) => ({type: 'roads', seq, shoe: number,
    stats: {cards_left: left}});
  const out = {};
  let s = all(emptyState('T1'), [shoe(1, 1), card(2, 1, 'P1', '2S'), card(3, 1, 'P1', '9H')]);
  out.duplicate_card = s.live.cards;
  s = all(s, [result(4, 1, 'banker'), {type: 'void', seq: 5, shoe: 1, round: 1,
    round_id: '1-1', reason: 'pit', demo: false}, result(4, 1, 'banker')]);
  out.void = [s.live.status, s.results.length];
  s = all(s, [alarm(6, 7), {type: 'alarm_cleared', seq: 7, id: 7, kind: 'extra_card', by: 'void',
    shoe: 1, round: 1}, alarm(6, 7)]);
  out.late_alarm = s.alarms.length;
  let c = emptyState('T1');  // cards left: the newer of the shoe and roads messages
  const left = [cardsLeft(c)];
  for (const m of [shoe(7, 1), roads(8, 1, 390), {...shoe(9, 1), cards_left: 385}]) {
    c = fold(c, m);
    left.push(cardsLeft(c));
  }
  out.cards_left = left;
  s = all(s, [roads(8, 1, 390), roads(3, 1, 380), shoe(9, 2)]);
  out.older_roads_and_new_shoe = [s.roadsMessage.seq, currentRoads(s)];
  const same = fold(s, card(2, 1, 'P1', '2S'));
  out.same_object = same === s;
  s = all(s, [shoe(5000, 2), result(5001, 3, 'player'), shoe(2, 3)]);
  out.restart = [s.shoe.shoe, s.highestSeq, lastResult(s)];
  out.rejected = fold(s, {nothing: true}).rejected;
  // a page opened late: the alarms list and the round's cards so far
  const open = (seq, id, lasting) => ({...alarm(seq, id), lasting});
  let late = all(emptyState('T1'), [open(5, 9, false), open(10, 1, true), open(20, 2, true),
    {type: 'alarms', seq: 15, alarms: [{...open(10, 1, true), count: 2}]}]);
  out.alarms_list = late.alarms.map((a) => [a.id, a.count || 1]);
  late = all(late, [{type: 'alarms', seq: 30, alarms: []},
    {type: 'alarms', seq: 25, alarms: [open(20, 2, true)]}]);
  out.alarms_settled = late.alarms.map((a) => a.id);
  late = fold(late, {type: 'round', seq: 40, shoe: 1, round: 5, round_id: '1-5',
    status: 'open', demo: false, next: 'B2', player_total: 3, banker_total: 9,
    cards: [{position: 'P1', card: 'AS'}, {position: 'burn', card: null},
      {position: 'B1', card: '9H'}, {position: 'P2', card: '2C'}]});
  out.late_round = [late.live.cards, late.live.playerTotal, late.live.bankerTotal, late.live.next];
  // what players wait for: the lasting kinds (the one alarm table's), and corrections
  out.blocking = blockingAlarms(['link_down', 'publish_refused', 'shoe_deaf', 'bad_data',
    'outbox_full'].map((kind) => ({kind, corrections: []}))
    .concat([{kind: 'extra_card', corrections: ['void']}])).map((a) => a.kind);
  return out;
})()"""


@pytest.mark.slow
@in_chromium
async def test_the_page_folds_messages_like_the_terminal_board(tmp_path: Path) -> None:
    config = page_config("127.0.0.1", 1, None, PREFIX)  # no table: the page stays offline
    async with (
        WebBoardServer(config) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        page = await browser.open(server.url, width=1280, height=720)
        await page.wait_for("!document.getElementById('no-table').hidden", limit=WAIT)
        checks = await page.evaluate(FOLD_CHECKS)
        assert page.console == []
    assert checks == {
        "duplicate_card": [["P1", "2S"]],
        "void": ["void", 0],
        "late_alarm": 0,
        "cards_left": [None, 400, 390, 385],
        "older_roads_and_new_shoe": [8, None],
        "same_object": True,
        "restart": [3, 2, None],
        "rejected": 1,
        "alarms_list": [[1, 2], [2, 1], [9, 1]],  # 1 coalesced, 2 raised after the list
        "alarms_settled": [9],  # a one-off notice stays; an older list changes nothing
        "late_round": [[["P1", "AS"], ["B1", "9H"], ["P2", "2C"]], 3, 9, "B2"],
        # publish_refused was missing from the page's own copy of the lasting set
        "blocking": ["link_down", "publish_refused", "shoe_deaf", "extra_card"],
    }


# --- the file server, without a browser --------------------------------------------------

SERVER_CONFIG = page_config("127.0.0.1", 9001, "T1", "baccarat")


def test_page_config_points_the_page_at_the_broker() -> None:
    assert page_config("localhost", 9001, "T1", "p").ws_host is None  # the page's own host
    assert page_config("::1", 9001, "T1", "p").ws_host is None
    assert page_config("broker.lan", 9002, None, "p").ws_host == "broker.lan"
    assert page_config("fd00::5", 9002, None, "p").ws_host == "[fd00::5]"
    body = json.loads(page_config("broker.lan", 9002, "T9", "casino").to_json())
    assert body == {
        "table": "T9",
        "prefix": "casino",
        "ws_host": "broker.lan",
        "ws_port": 9002,
        "ws_path": "/mqtt",
    }


async def test_the_server_answers_files_and_refuses_the_rest() -> None:
    async with WebBoardServer(SERVER_CONFIG) as server:
        assert server.respond("GET", "/").content_type.startswith("text/html")
        assert server.respond("GET", "/?table=T2&lang=zh").status == 200
        assert server.respond("GET", "/board.js").content_type.startswith("text/javascript")
        assert server.respond("GET", "/vendor/mqtt.esm.js").status == 200
        config = server.respond("GET", "/config.json")
        assert json.loads(config.body)["table"] == "T1"
        for target in ("/../web_server.py", "/%2e%2e/web_server.py", "/nothing", "/vendor"):
            assert server.respond("GET", target).status == 404, target
        assert server.respond("POST", "/").status == 405


async def http(port: int, request: bytes) -> tuple[bytes, dict[str, str], bytes]:
    """Send a raw request; the status line, the headers and the body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        async with asyncio.timeout(5):
            answer = await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return status.encode(), headers, body


async def test_the_server_over_http() -> None:
    async with WebBoardServer(SERVER_CONFIG) as server:
        status, headers, body = await http(server.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == b"HTTP/1.1 200 OK"
        assert b'<script type="module" src="board.js">' in body
        assert int(headers["Content-Length"]) == len(body)
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        status, headers, body = await http(server.port, b"HEAD /board.css HTTP/1.1\r\n\r\n")
        assert (status, body) == (b"HTTP/1.1 200 OK", b"")
        assert int(headers["Content-Length"]) > 1000
        status, _, _ = await http(server.port, b"nonsense\r\n\r\n")
        assert status == b"HTTP/1.1 400 Bad Request"


def test_every_page_file_ships_in_the_wheel() -> None:
    """Each file of the page matches a package-data pattern of pyproject.toml."""
    root = ROOT
    with (root / "pyproject.toml").open("rb") as f:
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]["baccarat"]
    web = root / "src" / "baccarat" / "boards" / "web"
    files = [p for p in web.rglob("*") if p.is_file()]
    assert {"index.html", "board.js", "mqtt.esm.js", "LICENSE-mqtt.md"} <= {p.name for p in files}
    for path in files:
        relative = path.relative_to(root / "src" / "baccarat").as_posix()
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative


def test_baccarat_board_web_serves_and_says_where(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "baccarat.cli", "board", "--web", "0"]
    command += ["--broker", "broker.invalid:1883", "--ws-port", "9002", "--table", "T3"]
    command += ["--ws-username", "board"]
    env = {**os.environ, "BACCARAT_BOARD_PASSWORD": "b0ard"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("web board: http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(f"{url}config.json", timeout=5) as response:
            config = json.load(response)
        assert config["table"] == "T3"
        assert (config["ws_host"], config["ws_port"]) == ("broker.invalid", 9002)
        assert (config["username"], config["password"]) == ("board", "b0ard")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 130
    finally:
        process.kill()
        process.communicate()


def test_baccarat_board_needs_a_table_or_web() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "board"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "--table is required" in done.stderr
