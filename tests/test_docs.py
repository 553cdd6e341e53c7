"""README.md and the documents under docs/ name what exists: commands, options, modules, paths.

The documents are read as text and checked against the code: the command table of
docs/operators.md against the ``baccarat`` parser's own help, every module and path named
against the tree, every relative link against the files and headings it points at, and
every package and module of ``src/baccarat`` against the places that list them. A rename
or a split that forgets a document fails here, naming what is stale. README.md is the
front door and stays under 20,000 bytes; what does not fit goes to docs/.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
from pathlib import Path

import pytest

from baccarat.cli import SUBCOMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "baccarat"
README = (ROOT / "README.md").read_text(encoding="utf-8")
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
OPERATORS = (ROOT / "docs" / "operators.md").read_text(encoding="utf-8")
DEVELOPERS = (ROOT / "docs" / "developers.md").read_text(encoding="utf-8")
README_LIMIT = 20_000  # bytes: a front door, not a manual (issue 31)

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
TREE_PATH = re.compile(
    r"(?<![\w./-])(?:src|tests|bench|docs|examples|systemd|scripts|packaging|schemas)"
    r"/[\w./@-]*[\w/]"
)


def section(text: str, heading: str) -> str:
    """The text under ``heading`` (a line of its own) up to the next heading of any level."""
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    end = text.find("\n#", start)
    return text[start:] if end < 0 else text[start:end]


def command_rows() -> list[tuple[str, str]]:
    """docs/operators.md's command table: (the command cell, the description cell) per row."""
    rows = []
    for line in section(OPERATORS, "## Commands").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 2 and cells[0].startswith("`baccarat"):
            rows.append((cells[0], cells[1]))
    return rows


def help_text(words: list[str]) -> str:
    """What ``baccarat WORDS --help`` prints (the parser's own help, nothing run)."""
    out = io.StringIO()
    parser = build_parser(words[0] if words else None)
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args([*words, "--help"])
    return out.getvalue()


def command_words(cell: str) -> list[str]:
    """The subcommand words of a command cell (``journal show`` of ``baccarat journal show``)."""
    tokens = cell.strip("`").split()[1:]
    words: list[str] = []
    for token in tokens:
        if not re.fullmatch(r"[a-z]+", token):
            break
        known = help_text(words)
        listed = re.findall(r"^ {4}([a-z]+) ", known, re.MULTILINE)
        if token not in listed:
            break
        words.append(token)
    return words


PACKAGES = "|".join(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
DOTTED = re.compile(rf"`((?:baccarat|{PACKAGES})(?:\.[A-Za-z_]+)+)`")
FILE = re.compile(r"(?<![\w/.-])((?:[a-z_]+/)*[a-z_]+\.py)\b")
FILE_SUFFIXES = {"py", "conf", "toml", "md", "js", "json", "png", "service", "css", "html", "svg"}
OUTSIDE = ("tests/", "bench/", "scripts/", "docs/", "packaging/", "examples/")


def named_modules(text: str) -> set[str]:
    """Modules a document names: ``baccarat.x.y`` or ``x.y`` dotted, and ``name.py`` files."""
    names = set()
    for dotted in DOTTED.findall(text):
        if dotted.rsplit(".", 1)[1] in FILE_SUFFIXES:
            continue  # a file's name (floor.conf), not a module
        names.add(dotted if dotted.startswith("baccarat.") else "baccarat." + dotted)
    names.update(f for f in FILE.findall(text) if not f.startswith(OUTSIDE))
    return names


def resolves(name: str) -> bool:
    """Whether ``name`` is a module or package of ``src/baccarat`` (or a file ending so)."""
    if name.endswith(".py"):  # of the package, or a test's, bench's or script's file by its name
        trees = [PACKAGE, ROOT / "tests", ROOT / "bench", ROOT / "scripts"]
        return any(p.as_posix().endswith("/" + name) for tree in trees for p in tree.rglob("*.py"))
    parts = name.split(".")
    for end in range(len(parts), 1, -1):  # baccarat.rules.edge.live_odds: rules/edge.py's
        base = PACKAGE.joinpath(*parts[1:end])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            found: object = importlib.import_module(".".join(parts[:end]))
            for attribute in parts[end:]:
                if not hasattr(found, attribute):
                    return False
                found = getattr(found, attribute)
            return True
    return False


def test_the_readme_command_table_has_rows() -> None:
    rows = command_rows()
    assert len(rows) >= len(SUBCOMMANDS), rows


def test_every_command_in_the_readme_table_exists_with_its_options() -> None:
    stale = []
    for command, description in command_rows():
        words = command_words(command)
        if not words and "--version" not in command:
            stale.append(f"{command}: no such subcommand")
            continue
        known = help_text(words)
        for option in OPTION.findall(command + " " + description):
            if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", known):
                stale.append(f"{command}: baccarat {' '.join(words)} has no {option}")
    assert not stale, "\n".join(stale)


def test_every_subcommand_is_in_the_readme_table() -> None:
    listed = {tuple(command_words(command)[:1]) for command, _ in command_rows()}
    missing = [name for name in SUBCOMMANDS if (name,) not in listed]
    assert not missing, f"subcommands docs/operators.md's command table does not give: {missing}"


MARKDOWN = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCUMENTS = [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in MARKDOWN]


# docs/benchmarks.md records each measurement against the code of its day, naming modules
# renamed or removed since (controller/mqtt.py, datasync.py): a history, not a map.
HISTORIES = {"docs/benchmarks.md"}


@pytest.mark.parametrize(("name", "text"), [d for d in DOCUMENTS if d[0] not in HISTORIES])
def test_every_module_a_document_names_exists(name: str, text: str) -> None:
    missing = sorted(m for m in named_modules(text) if not resolves(m))
    assert not missing, f"{name} names modules that do not exist: {missing}"


@pytest.mark.parametrize(("name", "text"), DOCUMENTS)
def test_every_path_a_document_gives_exists(name: str, text: str) -> None:
    missing = sorted({p for p in TREE_PATH.findall(text) if not (ROOT / p).exists()})
    assert not missing, f"{name} gives paths that do not exist: {missing}"


def test_every_package_and_top_module_has_a_row_in_the_design_table() -> None:
    table = section(DESIGN, "## Packages and the dependency rule")
    rows = set(re.findall(r"`(baccarat(?:\.[a-z_]+)+)`", table))
    units = [f"baccarat.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")]
    units += [f"baccarat.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"]
    missing = sorted(u for u in units if u not in rows)
    assert not missing, f"docs/design.md's table has no row for: {missing}"


def test_every_module_is_named_in_the_design() -> None:
    """Each module's name is a word of docs/design.md (``cli`` is one module a command)."""
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.stem.startswith("__") or path.parent.name == "cli":
            continue
        if not re.search(rf"(?<![\w-]){re.escape(path.stem)}(?![\w-])", DESIGN):
            missing.append(path.relative_to(PACKAGE).as_posix())
    assert not missing, f"modules docs/design.md does not name: {missing}"


def test_the_readme_is_at_most_20000_bytes() -> None:
    size = len(README.encode("utf-8"))
    assert size <= README_LIMIT, (
        f"README.md is {size:,} bytes, over {README_LIMIT:,}: move the details to a docs/ file "
        "and leave a pointer under 'Where to go next'"
    )


def test_the_layout_lists_every_package_and_top_module() -> None:
    layout = section(DEVELOPERS, "## Layout")
    missing = [
        f"src/baccarat/{p.parent.relative_to(PACKAGE).as_posix()}/"
        for p in PACKAGE.rglob("__init__.py")
        if p.parent != PACKAGE
        and f"src/baccarat/{p.parent.relative_to(PACKAGE).as_posix()}/" not in layout
    ]
    missing += [p.name for p in PACKAGE.glob("*.py")
                if p.stem != "__init__" and not re.search(rf"\b{p.name}\b", layout)]
    assert not missing, f"docs/developers.md's layout does not list: {missing}"


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$")


def outside_code(text: str) -> str:
    """The text of a Markdown document without its fenced code blocks."""
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.MULTILINE | re.DOTALL)


def anchors(text: str) -> set[str]:
    """The anchors of a document's headings, made as GitHub makes them (repeats get -1, -2)."""
    found: set[str] = set()
    for line in outside_code(text).splitlines():
        heading = HEADING.match(line)
        if heading is None:
            continue
        words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1))  # a link: its text
        slug = re.sub(r"[^\w\- ]", "", words.strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def broken_links(path: Path) -> list[str]:
    """Each relative link of a document whose file, or heading, does not exist."""
    broken = []
    for target in LINK.findall(outside_code(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not ours to check
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif linked.suffix == ".md" and anchor and anchor not in anchors(linked.read_text("utf-8")):
            broken.append(f"{target}: no heading of {file_part or path.name} makes #{anchor}")
    return broken


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_points_at_a_file_and_heading_that_exist(path: Path) -> None:
    broken = broken_links(path)
    assert not broken, f"{path.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


def test_the_link_check_sees_a_broken_file_and_a_broken_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Top\n\n## Two words: `x.py`\n\n```\n# not a heading\n```\n")
    doc = tmp_path / "b.md"
    doc.write_text(
        "[ok](a.md#two-words-xpy) [ok](a.md#top) [gone](c.md) [bad](a.md#not-a-heading) "
        "[self](#here)\n\n## Here\n"
    )
    assert broken_links(doc) == [
        "c.md: no such file",
        "a.md#not-a-heading: no heading of a.md makes #not-a-heading",
    ]
