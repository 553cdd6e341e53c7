"""``baccarat run --config FILE``: the table's daemon (:mod:`baccarat.controller.table`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from baccarat import logs
from baccarat.cli.common import add_log_arguments
from baccarat.controller.config import ConfigError, load_config
from baccarat.controller.faults import FAULT_EXIT
from baccarat.controller.serving import run_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat run``."""
    parser.add_argument("--config", type=Path, required=True, help="the table's TOML file")
    add_log_arguments(parser)
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
