"""The daemon's configuration: a TOML file, overridden by environment variables.

Environment variables are ``BACCARAT_<FIELD>``, nested with ``__``:
``BACCARAT_TABLE=T07``, ``BACCARAT_BROKER__HOST=10.0.0.5``, ``BACCARAT_DEVICE__PATH=...``.
A bad configuration is reported naming the field, where its value came from (the file,
or the environment variable that set it) and what is wrong with it (:func:`load_config`
raises :class:`ConfigError`; ``baccarat run`` then exits with status 2).

Booleans and numbers are strict: nothing is guessed from a string. In the TOML file a
boolean is ``true`` or ``false`` and a number is written without quotes (``fsync = "yes"``,
``port = "1883"`` and, for a whole number, ``retention = 200.0`` are errors). An
environment variable is always a string, so for a boolean or a number field it is read
as a JSON literal and must be exactly one: ``true`` or ``false`` (lower case), a whole
number in decimal (``8883``, ``-1``), or a number (``0.02``, ``1e-3``); ``yes``, ``1`` for
a boolean, ``True``, ``0x1209`` or ``8883.0`` for a whole number are errors. A section's
variable holds JSON (``BACCARAT_BROKER='{"port": 1883}'``), strict in the same way. Paths
and texts are taken as written. The ``[rules]`` table is the rule profile's overrides,
checked by the profile.
"""

from __future__ import annotations

import json
import logging
import os
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, ClassVar, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from baccarat.drivers.codec import codec_names, get_codec
from baccarat.drivers.events import DealerButton
from baccarat.errors import BaccaratError
from baccarat.rules.edge import Bet, cards_left, live_odds
from baccarat.rules.profiles import MIN_REAL_DECKS, Profile, ProfileError, load_profile

_log = logging.getLogger(__name__)

DEFAULT_JOURNAL = Path("/var/lib/baccarat-controller")
TABLE_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
TOPIC_PREFIX = r"^[A-Za-z0-9_./-]{1,64}$"
RESERVED_TABLE = "floor"
"""The floor recorder's own topics are under it (floor/shuffle.py)."""
ENV_PREFIX = "BACCARAT_"
ENV_NESTING = "__"

FieldPath = tuple[str, ...]
"""A configuration field as a path of names: ``("broker", "port")``."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _path(default: Path | None = None, description: str | None = None) -> Any:
    """A path field: a TOML or environment string taken as the path (not strict)."""
    return Field(default=default, strict=False, description=description)


class DeviceConfig(_Section):
    """Where the shoe or shuffler is and how it speaks."""

    kind: Literal["serial", "usb", "none"] = "serial"
    path: str | None = Field(
        default=None, description="Serial device path, or socket://host:port (kind=serial)."
    )
    protocol: str = Field(
        default="line", description="The wire protocol: a codec's name (drivers/codec.py)."
    )
    baud: int = Field(default=9600, gt=0, le=4_000_000)
    usb_vendor: int = Field(default=0x1209, ge=0, le=0xFFFF)
    usb_product: int = Field(default=0x0001, ge=0, le=0xFFFF)
    quiet_after: float = Field(
        default=30.0, gt=0, le=86_400,
        description="Seconds without a byte from the device after which the log says so.",
    )

    @field_validator("protocol")
    @classmethod
    def _known_codec(cls, protocol: str) -> str:
        if protocol not in codec_names():
            raise ValueError(f"unknown protocol {protocol!r}: one of {', '.join(codec_names())}")
        return protocol

    def sends_buttons(self) -> bool:
        """The device's protocol carries the dealer's buttons (``open``, ``declare``...)."""
        return self.kind != "none" and DealerButton in get_codec(self.protocol).carries

    @model_validator(mode="after")
    def _path_for_serial(self) -> DeviceConfig:
        if self.kind == "serial" and not self.path:
            raise ValueError("device.path is required when device.kind is serial")
        return self


OUTBOX_LIMIT: Final = 500_000
"""Messages the outbox holds by default (days of broker outage: docs/benchmarks.md)."""


class BrokerConfig(_Section):
    """The table's MQTT broker."""

    host: str = "127.0.0.1"
    port: int = Field(default=1883, gt=0, le=65535)
    username: str | None = None
    password: SecretStr | None = None
    password_file: Path | None = _path(
        description="A file holding the password (for systemd credentials)."
    )
    tls: bool = False
    ca_file: Path | None = _path()
    cert_file: Path | None = _path()
    key_file: Path | None = _path()
    keepalive: int = Field(default=15, ge=2, le=600, description="Seconds.")
    client_id: str | None = None
    mqtt_version: Literal["5", "3.1.1"] = Field(
        default="5",
        description="MQTT 5 carries commands' response topics; 3.1.1 for a broker without it.",
    )
    outbox_limit: int = Field(
        default=OUTBOX_LIMIT, ge=100,
        description="Messages kept for the broker at most; past it the oldest are dropped "
        "(they remain in the journal) and an outbox_full alarm says so.",
    )

    @model_validator(mode="after")
    def _files_exist(self) -> BrokerConfig:
        for name in ("password_file", "ca_file", "cert_file", "key_file"):
            path = getattr(self, name)
            if path is not None and not Path(path).is_file():
                raise ValueError(f"broker.{name}: no such file: {path}")
        if self.password is not None and self.password_file is not None:
            raise ValueError("give broker.password or broker.password_file, not both")
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("broker.cert_file and broker.key_file go together")
        return self

    def resolved_password(self) -> str | None:
        """The password, read from ``password_file`` if that is how it was given."""
        if self.password_file is not None:
            return self.password_file.read_text(encoding="utf-8").strip()
        return self.password.get_secret_value() if self.password else None


class JournalConfig(_Section):
    """Where the journal lives and how long it is kept."""

    folder: Path = _path(DEFAULT_JOURNAL)
    fsync: bool = Field(default=True, description="fdatasync each input before acting on it.")
    sync: Literal["inline", "overlap"] = Field(
        default="inline",
        description='Obsolete: records are always flushed inline; "overlap" is accepted.',
    )
    retention: int = Field(default=200, ge=1, description="Shoe files kept.")

    @model_validator(mode="after")
    def _obsolete_sync(self) -> JournalConfig:
        if self.sync == "overlap":
            _log.warning(
                'journal.sync = "overlap" is no longer used: each record is flushed'
                " (fdatasync) before the engine sees its input; remove the setting"
            )
        return self


class MetricsConfig(_Section):
    """The Prometheus endpoint (``baccarat.controller.metrics``); off unless a port is set."""

    port: int = Field(default=0, ge=0, le=65535, description="0: no metrics endpoint.")
    host: str = Field(default="127.0.0.1", description="Loopback unless a scraper needs more.")


class EdgeConfig(_Section):
    """The live edge (``controller/edge_watch.py``) and its ``advantage`` thresholds.

    A threshold is a player edge per unit staked (0.02: the bettor wins 2 % of his stake on
    average): at or above it the bet raises ``advantage``; the notice goes back once the
    edge is below it by ``clear_margin`` and ``clear_after_cards`` cards have come out since
    (hysteresis: an edge hovering at the threshold raises one notice, not one per card).
    ``advantage`` is the one figure of the tie and both pairs, each overridable; banker and
    player are watched only when given a figure of their own (they barely move). The
    default, +2 %, is an edge a counter would bet on (a positive edge worth the staff's
    attention), not the first flicker above zero (docs/surveillance.md).
    """

    enabled: bool = Field(default=True, description="Compute and publish the edge.")
    advantage: float = Field(
        default=0.02, allow_inf_nan=False,
        description="The player edge at or above which the tie and pair bets raise advantage.",
    )
    clear_margin: float = Field(
        default=0.01, ge=0, le=1, allow_inf_nan=False,
        description="How far below its threshold a bet's edge must fall for its notice to go.",
    )
    clear_after_cards: int = Field(
        default=6, ge=0, le=416,
        description="Cards out since a notice was raised before it may go back.",
    )
    banker: float | None = Field(default=None, allow_inf_nan=False)
    player: float | None = Field(default=None, allow_inf_nan=False)
    tie: float | None = Field(default=None, allow_inf_nan=False)
    player_pair: float | None = Field(default=None, allow_inf_nan=False)
    banker_pair: float | None = Field(default=None, allow_inf_nan=False)

    def thresholds(self) -> dict[Bet, float]:
        """Each watched bet's threshold (none when the edge is off)."""
        if not self.enabled:
            return {}
        figures: dict[Bet, float | None] = {
            "banker": self.banker, "player": self.player,
            "tie": self.advantage if self.tie is None else self.tie,
            "player_pair": self.advantage if self.player_pair is None else self.player_pair,
            "banker_pair": self.advantage if self.banker_pair is None else self.banker_pair,
        }
        return {bet: figure for bet, figure in figures.items() if figure is not None}


class ShuffleConfig(_Section):
    """The shuffle check: the shoe in play against the table's last shoes (docs/surveillance.md)."""

    shoes: int = Field(
        default=24, ge=0, le=1000,
        description="Earlier shoes of the journal each shoe is compared with; 0: no check.",
    )


class Config(BaseSettings):
    """Everything ``baccarat run`` needs."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter=ENV_NESTING, extra="forbid", frozen=True
    )
    toml_path: ClassVar[Path | None] = None

    table: str = Field(pattern=TABLE_ID, description="The table's id, used in topics.")
    topic_prefix: str = Field(default="baccarat", pattern=TOPIC_PREFIX)
    profile: str = "macau"
    rules: dict[str, Any] = Field(
        default_factory=dict, description="Overrides of the profile's settings."
    )
    allow_test_decks: bool = Field(
        default=False, strict=True, description="Accept fewer than 6 decks (tests and demos only)."
    )
    key_file: Path | None = Field(
        default=None,
        description="The table's Ed25519 signing key (PEM, readable by its owner only); "
        "unset: table.key in the journal's folder, made if missing (docs/record.md).",
    )
    device: DeviceConfig = DeviceConfig(kind="none")
    broker: BrokerConfig = BrokerConfig()
    journal: JournalConfig = JournalConfig()
    metrics: MetricsConfig = MetricsConfig()
    edge: EdgeConfig = EdgeConfig()
    shuffle: ShuffleConfig = ShuffleConfig()

    @field_validator("table")
    @classmethod
    def _not_the_floor(cls, table: str) -> str:
        if table == RESERVED_TABLE:
            raise ValueError(
                f"{RESERVED_TABLE!r} is no table's id: the floor recorder speaks on"
                f" {{prefix}}/{RESERVED_TABLE}/surveillance in its own name"
            )
        return table

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Init arguments, then the environment (:class:`_LiteralEnvSource`), then the file."""
        sources: list[PydanticBaseSettingsSource] = [init_settings, _LiteralEnvSource(settings_cls)]
        if cls.toml_path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=cls.toml_path))
        return tuple(sources)

    def rule_profile(self) -> Profile:
        """The rule profile with this table's overrides.

        Raise :class:`FieldError` for a field that cannot be used, :class:`ProfileError`
        for an unknown profile, and pydantic's ValidationError for bad settings.
        """
        if "name" in self.rules:
            raise FieldError(
                ("rules", "name"),
                "the profile's name is chosen with profile = NAME, not in [rules]",
            )
        profile = load_profile(self.profile, **self.rules)
        if profile.open_mode == "auto":
            mode = "explicit" if self.device.sends_buttons() else "implicit"
            profile = profile.model_copy(update={"open_mode": mode})
        if profile.burn_press == "auto":
            press = "required" if self.device.sends_buttons() else "ignored"
            profile = profile.model_copy(update={"burn_press": press})
        if profile.decks < MIN_REAL_DECKS and not self.allow_test_decks:
            raise FieldError(
                ("rules", "decks") if "decks" in self.rules else ("profile",),
                f"a real table uses {MIN_REAL_DECKS} to 12 decks, not {profile.decks} "
                "(set allow_test_decks = true for tests)",
            )
        return profile

    def open_mode_reason(self) -> str:
        """How this table's rounds open, and why: for the log at start."""
        mode = self.rule_profile().open_mode
        if "open_mode" in self.rules or load_profile(self.profile).open_mode != "auto":
            why = "as the configuration sets it"
        elif mode == "explicit":
            why = f"the {self.device.protocol} device sends the dealer's buttons"
        elif self.device.kind == "none":
            why = "no device: cards and commands come from elsewhere"
        else:
            why = (f"the {self.device.protocol} device sends cards only: an extra card after "
                   "a complete round cannot be told from the next round's first")
        how = "on the dealer's 'open'" if mode == "explicit" else "with their first card"
        text = f"rounds open {how} (open_mode {mode}): {why}"
        profile = self.rule_profile()
        if profile.burn_per_round and profile.burn_press == "required":
            text += ("; a round's burn card is taken as one only after the dealer's burn "
                     "button (burn_press required): a round dealt without it raises burn_skipped")
        return text

    def topic(self, name: str) -> str:
        """The full topic of one of the table's subtopics."""
        return f"{self.topic_prefix}/{self.table}/{name}"


class _LiteralEnvSource(EnvSettingsSource):
    """The environment, its strings read as exact JSON literals where a field is a number.

    pydantic-settings would hand a strict boolean ``"yes"`` to a lax parse (``True``);
    here a boolean field takes ``true`` or ``false``, a whole number a JSON integer, a
    number a JSON number, and any other string is left as it is, for the strict model to
    refuse naming the field.
    """

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        """The field's value as the environment gives it, numbers and booleans read.

        In a section, only the values of its own variables (``BACCARAT_BROKER__PORT``)
        are read so; a section's JSON (``BACCARAT_BROKER``) is typed already, and a string
        in it where a number is due stays one, refused like the file's.
        """
        prepared = super().prepare_field_value(field_name, field, value, value_is_complex)
        if not isinstance(prepared, dict):
            return _env_literals(field.annotation, prepared)
        own = self.explode_env_vars(field_name, field, self.env_vars)
        return _merged(prepared, _env_literals(field.annotation, own))


def _env_literals(annotation: Any, value: Any) -> Any:
    """``value`` with each string for a boolean or number field read as its JSON literal."""
    if isinstance(value, dict):
        model = next((a for a in _members(annotation) if _is_model(a)), None)
        if model is None:
            return value
        fields = model.model_fields
        return {
            key: _env_literals(fields[key].annotation, item) if key in fields else item
            for key, item in value.items()
        }
    kinds = [a for a in _members(annotation) if a in (bool, int, float)]
    if not isinstance(value, str) or not kinds or value != value.strip():
        return value
    try:
        literal = json.loads(value)
    except ValueError:
        return value
    fits = isinstance(literal, bool) if bool in kinds else (
        isinstance(literal, int | float) and not isinstance(literal, bool)
        and (float in kinds or isinstance(literal, int))
    )
    return literal if fits else value


def _merged(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``update``'s values in its place, nested dictionaries merged."""
    merged = dict(base)
    for key, item in update.items():
        inner = merged.get(key)
        if isinstance(inner, dict) and isinstance(item, dict):
            merged[key] = _merged(inner, item)
        else:
            merged[key] = item
    return merged


def _members(annotation: Any) -> tuple[Any, ...]:
    """The types of a union (``int | None``: int, None), or the annotation itself."""
    args = typing.get_args(annotation)
    return args if args and typing.get_origin(annotation) in (typing.Union, types.UnionType) else (
        annotation,
    )


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


class ConfigError(BaccaratError):
    """A configuration that cannot be used; the text names the field and the problem."""


class FieldError(BaccaratError, ValueError):
    """One field of the configuration that cannot be used, and why."""

    def __init__(self, field: FieldPath, message: str) -> None:
        """``field`` names the field, ``message`` what is wrong with it."""
        super().__init__(f"{'.'.join(field)}: {message}")
        self.field, self.message = field, message


def load_config(path: Path | None, **overrides: Any) -> Config:
    """Read the TOML file (if any) and the environment; raise :class:`ConfigError`."""
    if path is not None:
        if not path.is_file():
            raise ConfigError(f"{path}: no such configuration file")
        try:
            with path.open("rb") as f:
                tomllib.load(f)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    Config.toml_path = path
    try:
        config = Config(**overrides)
    except ValidationError as exc:
        raise ConfigError(_describe(path, _validation_problems(exc))) from None
    except SettingsError as exc:  # a nested field's variable that is not JSON
        raise ConfigError(
            f"environment: {exc}: a section's variable holds JSON, "
            f"""as in {ENV_PREFIX}BROKER='{{"port": 1883}}'"""
        ) from None
    finally:
        Config.toml_path = None
    problems = _profile_problems(config) or _edge_problems(config)
    if problems:
        raise ConfigError(_describe(path, problems))
    return config


FieldProblem = tuple[FieldPath, str]
"""A field and what is wrong with it."""


STRICT_TYPES: Final = frozenset({"bool_type", "int_type", "float_type"})
"""pydantic's errors for a value of the wrong kind where a boolean or a number is due."""


def _validation_problems(exc: ValidationError) -> list[FieldProblem]:
    return [(tuple(str(p) for p in error["loc"]), _message(error)) for error in exc.errors()]


def _message(error: Any) -> str:
    """The validation message, and for a strict field what was given and how to write it."""
    text, given = str(error["msg"]), error.get("input")
    if error["type"] not in STRICT_TYPES:
        return text
    if isinstance(given, str):
        return (f"{text}, not the string {given!r}: nothing is guessed from a string "
                "(write true, false or a number without quotes; in the environment exactly "
                "true, false or a decimal number)")
    return f"{text}, not {given!r}"


def _profile_problems(config: Config) -> list[FieldProblem]:
    """What is wrong with the rule profile and the table's overrides of it."""
    try:
        config.rule_profile()
    except FieldError as exc:
        return [(exc.field, exc.message)]
    except ValidationError as exc:
        return [_rules_problem(config, field, text) for field, text in _validation_problems(exc)]
    except ProfileError as exc:
        return [(("profile",), str(exc))]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
        return [(("profile",), f"cannot read the profile {config.profile!r}: {exc}")]
    return []


def _edge_problems(config: Config) -> list[FieldProblem]:
    """Thresholds that would stand from a shoe's first card, or that no shoe can reach.

    The tie's player edge on a full shoe is about -14 % and can reach its payout (8) only
    when every card left makes a tie; a threshold at or below the full shoe's figure would
    raise advantage on every shoe, one above the payout never.
    """
    profile = config.rule_profile()
    full = live_odds(profile, cards_left(profile, ()))
    problems: list[FieldProblem] = []
    for bet, threshold in config.edge.thresholds().items():
        start = -float(full.house_edge(bet))
        most = getattr(profile.payouts, "pair" if bet.endswith("_pair") else bet)
        field = bet if getattr(config.edge, bet) is not None else "advantage"
        if not start < threshold <= most and ("edge", field) not in dict(problems):
            problems.append((
                ("edge", field),
                f"{threshold} for {bet}: a player edge above the full shoe's {start:+.4f} "
                f"(else it stands from the first card) and at most the payout {most}",
            ))
    return problems


def _rules_problem(config: Config, field: FieldPath, text: str) -> FieldProblem:
    """A bad profile setting: a [rules] override's, else the profile's own."""
    if field and field[0] in config.rules:
        return ("rules", *field), text
    return ("profile",), f"{'.'.join(field)}: {text}"


def _describe(path: Path | None, problems: list[FieldProblem]) -> str:
    """The problems, one a line, each naming the environment variable that set it, if one did."""
    lines, origins = [], []
    for field, text in problems:
        variable = _variable(field)
        origin = "environment" if variable else str(path or "configuration")
        if origin not in origins:
            origins.append(origin)
        shown = ".".join(field) or "(top level)"
        lines.append(f"  {shown} (from ${variable}): {text}" if variable else f"  {shown}: {text}")
    return "\n".join([f"{' and '.join(origins)}: {len(problems)} problem(s)", *lines])


def _variable(field: FieldPath) -> str | None:
    """The environment variable that set ``field`` (or a section's JSON holding it), if any."""
    environment = {name.upper(): value for name, value in os.environ.items()}
    for end in range(len(field), 0, -1):
        name = ENV_PREFIX + ENV_NESTING.join(field[:end]).upper()
        if name in environment and (end == len(field) or _holds(environment[name], field[end:])):
            return name
    return None


def _holds(text: str, field: FieldPath) -> bool:
    """Whether a section's JSON value ``text`` sets ``field`` (a path inside it)."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    for name in field:
        if not isinstance(value, dict) or name not in value:
            return False
        value = value[name]
    return True
