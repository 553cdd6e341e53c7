"""examples/nats/: every node's configuration is one nats-server accepts, with the accounts.

``nats-server -t`` parses a configuration (and its ``include``) and exits, saying whether
it is valid; the accounts must grant what ``baccarat.floor.nodes.users`` grants the test
cluster (the same permissions, so the tests' refusals are the example's).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from baccarat.floor.nodes import users

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "nats"


@pytest.mark.parametrize("node", ["node1.conf", "node2.conf", "node3.conf"])
def test_every_node_configuration_is_valid(node: str) -> None:
    program = shutil.which("nats-server") or "/usr/sbin/nats-server"
    if not Path(program).exists():
        pytest.skip("nats-server is not installed (scripts/setup --system installs it)")
    done = subprocess.run([program, "-c", str(EXAMPLES / node), "-t"], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is valid" in done.stdout + done.stderr


def test_the_example_accounts_grant_what_the_tests_grant() -> None:
    text = (EXAMPLES / "accounts.conf").read_text()
    for user in users(["T07", "T08"], ["ana", "ben"]):
        block = re.search(r"\{user: " + re.escape(user["user"]) + r",.*?\}\}\}", text, re.S)
        assert block is not None, user["user"]
        for way in ("publish", "subscribe"):
            for rule in ("allow", "deny"):
                want = user["permissions"][way].get(rule, [])
                found = re.search(way + r": \{allow: \[(.*?)\](?:,\s*deny: \[(.*?)\])?\}",
                                  block.group(), re.S)
                assert found is not None, (user["user"], way)
                got = found.group(1 if rule == "allow" else 2) or ""
                assert re.findall(r'"([^"]+)"', got) == want, (user["user"], way, rule)
