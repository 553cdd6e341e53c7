"""``baccarat odds``: exact probabilities and house edges (:mod:`baccarat.rules.odds`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from baccarat.rules.odds import compute_odds
from baccarat.rules.profiles import load_profile


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat odds``."""
    parser.add_argument(
        "--decks", type=int, help="decks in the shoe (default: the profile's, macau 8)"
    )
    parser.add_argument(
        "--profile", default="macau", help="profile whose decks and payouts to price"
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
    odds = compute_odds(profile.decks, profile.payouts)
    if args.json:
        print(json.dumps({k: round(v, 6) for k, v in asdict(odds).items()}))
        return 0
    print(f"{profile.decks} decks ({profile.name}), exact by enumeration")
    for name, value in asdict(odds).items():
        label = name.replace("_", " ")
        shown = f"{value * 100:8.4f} %" if name.startswith("edge") else f"{value:.6f}"
        print(f"  {label:<12} {shown}")
    return 0
