"""``baccarat odds``: exact probabilities and house edges (:mod:`baccarat.rules.odds`).

With ``--out CARDS``, the odds of the next round on the cards left once those are out
(:mod:`baccarat.rules.edge`). A profile with side bets (``ez``: Dragon 7, Panda 8) has
their chances and edges beside the others' (``dragon7``, ``edge_dragon7``, ...).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict
from pathlib import Path

from baccarat.cards import Card, CardError, parse_card
from baccarat.errors import BaccaratError
from baccarat.rules.edge import EdgeError, cards_left, live_odds
from baccarat.rules.odds import compute_odds
from baccarat.rules.profiles import Profile, load_profile
from baccarat.rules.side_bets import SIDE_BETS


class OutError(BaccaratError, ValueError):
    """``--out`` names no readable list of cards; the text says why."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat odds``."""
    parser.add_argument(
        "--decks", type=int, help="decks in the shoe (default: the profile's, macau 8)"
    )
    parser.add_argument(
        "--profile", default="macau", help="profile whose decks and payouts to price"
    )
    parser.add_argument(
        "--out", metavar="CARDS",
        help="cards already out of the shoe, comma- or space-separated in any card notation "
        "(AS, 10h, A01), or @FILE to read them from a file: price the cards left",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Print the odds for the profile's decks (or ``--decks``); 2 if the arguments are bad."""
    if args.decks is not None and not 1 <= args.decks <= 12:
        print(f"baccarat odds: --decks must be 1 to 12, not {args.decks}", file=sys.stderr)
        return 2
    try:
        profile = load_profile(args.profile, decks=args.decks)
    except (ValueError, OSError) as exc:
        print(f"baccarat odds: {exc}", file=sys.stderr)
        return 2
    if args.out is not None:
        return _run_on_cards_left(profile, args.out, as_json=args.json)
    odds = compute_odds(profile.decks, profile.payouts)
    figures = _dealt(profile, asdict(odds))
    _print(f"{profile.decks} decks ({profile.name}), exact by enumeration", figures, args.json)
    return 0


def _run_on_cards_left(profile: Profile, out: str, *, as_json: bool) -> int:
    try:
        cards = read_cards(out)
        left = cards_left(profile, cards)
        odds = live_odds(profile, left)
    except (OutError, CardError, EdgeError) as exc:
        print(f"baccarat odds: --out: {exc}", file=sys.stderr)
        return 2
    # The full shoe's keys, in their order: both pairs' edges are always the same.
    live = {
        "edge_pair" if name == "edge_player_pair" else name: value
        for name, value in odds.as_floats().items() if name != "edge_banker_pair"
    }
    figures: dict[str, float] = {"cards_left": odds.cards_left, **_dealt(profile, live)}
    title = (
        f"{odds.cards_left} cards left of {profile.decks} decks ({profile.name}), "
        f"{len(cards)} out, exact by enumeration"
    )
    _print(title, figures, as_json)
    return 0


def _dealt(profile: Profile, figures: dict[str, float]) -> dict[str, float]:
    """The figures without those of side bets that the profile does not deal."""
    dropped = {f"{prefix}{bet}" for bet in SIDE_BETS if bet not in profile.side_bets
               for prefix in ("", "edge_")}
    return {name: value for name, value in figures.items() if name not in dropped}


def read_cards(out: str) -> list[Card]:
    """The cards named by ``--out``: a list, or ``@FILE`` holding one."""
    text = out
    if out.startswith("@"):
        try:
            text = Path(out[1:]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise OutError(f"cannot read {out[1:]!r}: {exc}") from exc
    return [parse_card(word) for word in re.split(r"[\s,]+", text) if word]


def _print(title: str, figures: dict[str, float], as_json: bool) -> None:
    if as_json:
        print(json.dumps({k: v if isinstance(v, int) else round(v, 6) for k, v in figures.items()}))
        return
    print(title)
    for name, value in figures.items():
        if name == "cards_left":
            continue
        label = name.replace("_", " ")
        shown = f"{value * 100:8.4f} %" if name.startswith("edge") else f"{value:.6f}"
        print(f"  {label:<12} {shown}")
