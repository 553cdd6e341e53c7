"""``baccarat run --config FILE``: the table's daemon (:mod:`baccarat.controller.table`)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from baccarat import logs
from baccarat.controller.config import ConfigError, load_config
from baccarat.controller.faults import FAULT_EXIT
from baccarat.controller.table import run_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat run``."""
    parser.add_argument("--config", type=Path, required=True, help="the table's TOML file")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING, ERROR")
    parser.add_argument(
        "--log-format",
        choices=logs.FORMATS,
        default=os.environ.get("BACCARAT_LOG_FORMAT", "text"),
        help="text (timestamped; for journald, with syslog levels) or json, one object a"
        " line (default: $BACCARAT_LOG_FORMAT, else text)",
    )
    parser.epilog = (
        "exit status: 0 stopped by SIGTERM or SIGINT, 2 a bad configuration, "
        f"{FAULT_EXIT} a journal fault (full, read-only, failing or locked; said on MQTT)"
    )


def run(args: argparse.Namespace) -> int:
    """Load the configuration and serve until SIGTERM or SIGINT; the exit status.

    0 after a signal, 2 a bad configuration, 3 a journal fault
    (:data:`~baccarat.controller.faults.FAULT_EXIT`, published on MQTT before the stop).
    """
    logs.configure(args.log_level, args.log_format)
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"baccarat run: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(run_table(config))
