"""Rule profiles: the settings a table selects by name, or loads from a TOML file.

* ``macau`` (default): the Macau regulation, Art. 1-18. 8 decks, burn by the first card's
  value, cut card, at most 3 demo rounds.
* ``house6``: the house procedure of seed 003. 6 decks, burn 8 at the start of the shoe and
  1 at the start of every round; after the cut card only that round, plus one more if it
  ended in a tie.
* ``csm``: an automatic shuffler-dealer (Art. 2.3, 7.2). No burn, no cut card; the round's
  cards go back into the machine after every round.
* ``ez``: EZ Baccarat on the Macau procedure (8 decks): no commission on Banker, whose bet
  pushes when Banker wins with three cards totalling 7, and the side bets Dragon 7 (40:1)
  and Panda 8 (25:1) settled in every result (:mod:`baccarat.rules.side_bets`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from baccarat.errors import BaccaratError
from baccarat.rules.side_bets import SideBet

BurnMethod = Literal["first_card", "decks", "fixed", "none"]
AfterCut = Literal["finish_round", "one_more_round", "one_more_if_tie"]
OpenMode = Literal["auto", "implicit", "explicit"]
RevealMode = Literal["immediate", "on_reveal"]
BurnPress = Literal["auto", "required", "ignored"]

MIN_REAL_DECKS = 6
MAX_DECKS = 12
MAX_ROADS_ROUNDS = MAX_DECKS * 52 // 4
"""The most rounds one page of roads holds: a 12-deck shoe of four-card rounds. The roads
body's size limit (``messages/roads.py``, docs/limits.md) is measured for it."""


class ProfileError(BaccaratError, ValueError):
    """A profile name that is neither built in nor a TOML file."""


def _default_burn_values() -> dict[str, int]:
    values = {str(n): n for n in range(2, 10)}
    values.update({"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10})
    return values


class Payouts(BaseModel):
    """What each winning bet pays per unit staked (Art. 17-18)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    player: float = 1.0
    banker: float = 1.0
    banker_commission: float = Field(default=0.05, ge=0, lt=1)
    tie: float = 8.0
    pair: float = 11.0
    banker_push_on_three_card_7: bool = Field(
        default=False,
        description="EZ Baccarat: a Banker win with three cards totalling 7 pushes the "
        "Banker bet (set banker_commission to 0 with it).",
    )
    dragon7: float = Field(default=40.0, gt=0, description="Dragon 7 pays this to 1.")
    panda8: float = Field(default=25.0, gt=0, description="Panda 8 pays this to 1.")


class Profile(BaseModel):
    """The rules a table plays by."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    decks: int = Field(default=8, ge=1, le=MAX_DECKS)
    burn: BurnMethod = "first_card"
    burn_count: int = Field(default=0, ge=0, le=60, description="Cards burned when burn=fixed.")
    burn_values: dict[str, int] = Field(
        default_factory=_default_burn_values,
        description="Rank -> cards burned after the face-up first card (burn=first_card).",
    )
    burn_per_round: int = Field(default=0, ge=0, le=10)
    cut_card: bool = True
    after_cut: AfterCut = "finish_round"
    max_demo_rounds: int = Field(default=3, ge=0, le=3)
    continuous_shuffler: bool = False
    roads_page: int = Field(
        default=0,
        ge=0,
        le=MAX_ROADS_ROUNDS,
        description="Results after which the roads start afresh; 0: at each new shoe only. "
        "A continuous shuffler has no shoe, so its roads would grow for ever.",
    )
    open_mode: OpenMode = Field(
        default="auto",
        description="explicit: a round opens on 'open'; implicit: on the first card after a "
        "closed round; auto: explicit when the table's device sends dealer buttons, else "
        "implicit (the daemon decides; with no device, as in a replay, implicit).",
    )
    burn_press: BurnPress = Field(
        default="auto",
        description="required: a round's burn card (burn_per_round) is taken as one only "
        "after the dealer's burn button, and a round dealt without the press raises "
        "burn_skipped; ignored: the button changes nothing; auto: required when the table's "
        "device sends dealer buttons, else ignored (the daemon decides; in a replay with no "
        "device, ignored).",
    )
    reveal: RevealMode = "immediate"
    payouts: Payouts = Payouts()
    side_bets: tuple[SideBet, ...] = Field(
        default=(),
        description="Side bets the table deals, settled in every result: dragon7 (Banker "
        "wins with a three-card 7), panda8 (Player wins with a three-card 8).",
    )

    @field_validator("burn_values")
    @classmethod
    def _every_rank_once(cls, values: dict[str, int]) -> dict[str, int]:
        missing = set("A23456789TJQK") - set(values)
        if missing:
            raise ValueError(f"burn_values lacks ranks {''.join(sorted(missing))}")
        return values

    @field_validator("side_bets")
    @classmethod
    def _each_side_bet_once(cls, bets: tuple[SideBet, ...]) -> tuple[SideBet, ...]:
        if len(set(bets)) != len(bets):
            raise ValueError(f"side_bets names a bet twice: {list(bets)}")
        return bets

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        if self.continuous_shuffler and (self.cut_card or self.burn != "none"):
            raise ValueError("a continuous shuffler has no cut card and no burn (Art. 2.3)")
        if self.continuous_shuffler and not self.roads_page:
            raise ValueError(f"a continuous shuffler needs roads_page (1 to {MAX_ROADS_ROUNDS}):"
                             " with no shoe to end them, its roads would grow for ever")
        return self

    def initial_burn(self, first_card_rank: str | None = None) -> int | None:
        """Cards to burn at the start of a shoe; ``None`` until the first card is seen."""
        if self.burn == "first_card":
            if first_card_rank is None:
                return None
            return 1 + self.burn_values[first_card_rank]
        if self.burn == "decks":
            return self.decks
        if self.burn == "fixed":
            return self.burn_count
        return 0


PROFILES: dict[str, dict[str, Any]] = {
    "macau": {"name": "macau"},
    "house6": {
        "name": "house6",
        "decks": 6,
        "burn": "fixed",
        "burn_count": 8,
        "burn_per_round": 1,
        "after_cut": "one_more_if_tie",
    },
    "csm": {
        "name": "csm",
        "burn": "none",
        "cut_card": False,
        "continuous_shuffler": True,
        "roads_page": 72,
    },
    "ez": {
        "name": "ez",
        "payouts": {"banker_commission": 0.0, "banker_push_on_three_card_7": True},
        "side_bets": ("dragon7", "panda8"),
    },
}


def load_profile(
    name: str = "macau", *, decks: int | None = None, **overrides: Any
) -> Profile:
    """A built-in profile by name, or a TOML file's path, with optional overrides."""
    if name in PROFILES:
        data = dict(PROFILES[name])
    elif name.endswith(".toml") or Path(name).is_file():
        data = profile_data_from_toml(Path(name))
    else:
        known = ", ".join(PROFILES)
        raise ProfileError(f"unknown profile {name!r}: use one of {known} or a .toml file")
    if decks is not None:
        data["decks"] = decks
    data.update(overrides)
    return Profile.model_validate(data)


def profile_data_from_toml(path: Path) -> dict[str, Any]:
    """Read a profile table from TOML: a top-level table, or ``[profile]``.

    ``base = "house6"`` starts from a built-in profile and changes only what is given.
    """
    with path.open("rb") as f:
        doc = tomllib.load(f)
    table: dict[str, Any] = doc.get("profile", doc)
    base = table.pop("base", None)
    data = dict(PROFILES[base]) if base else {}
    data["name"] = table.pop("name", path.stem)
    data.update(table)
    return data
