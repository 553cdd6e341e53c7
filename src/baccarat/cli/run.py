"""``baccarat run --config FILE``: the table's daemon (:mod:`baccarat.controller.table`)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from baccarat.controller.config import ConfigError, load_config
from baccarat.controller.table import run_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat run``."""
    parser.add_argument("--config", type=Path, required=True, help="the table's TOML file")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING, ERROR")


def run(args: argparse.Namespace) -> int:
    """Load the configuration (exit 2 if bad) and serve until SIGTERM or SIGINT."""
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"baccarat run: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(run_table(config))
