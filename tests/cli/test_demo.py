"""The README's main command, as a user runs it (without a terminal: plain lines)."""

from __future__ import annotations

import subprocess
import sys


def test_demo_plays_rounds_and_the_pit_settles_the_misdeals() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "demo", "--fast", "--plain", "--rounds", "12",
         "--web-port", "0"],
        capture_output=True, text=True, timeout=180, check=False,
    )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr + out
    assert "web board: http://127.0.0.1:" in out
    assert "round 12:" in out
    assert "ALARM extra_card" in out  # the dealer's extra card in round 4 ...
    assert "settled by accept_as_burn" in out  # ... burned by the pit
    assert "ALARM result_mismatch" in out  # the wrong declare in round 9 ...
    assert "settled by declare" in out  # ... declared again from the cards
    assert "12 rounds, 2 alarm(s)" in out
