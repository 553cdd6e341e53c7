"""The dependency rule of docs/design.md holds, and no module imports itself in a circle.

The layer contracts themselves are import-linter's (``[tool.importlinter]`` in
pyproject.toml); this test runs them, so that ``pytest`` alone catches a broken rule too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_import_cycle_anywhere_in_the_package() -> None:
    graph = grimp.build_graph("baccarat", cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.append(" -> ".join((module, *back)))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_only_the_mqtt_adapter_speaks_mqtt() -> None:
    """Only baccarat.mqtt imports paho; nothing imports aiomqtt (a test dependency)."""
    graph = grimp.build_graph("baccarat", include_external_packages=True, cache_dir=None)
    importers = {
        library: sorted(graph.find_modules_that_directly_import(library))
        for library in ("paho", "aiomqtt")
        if library in graph.modules
    }
    assert importers == {"paho": ["baccarat.mqtt"]}
