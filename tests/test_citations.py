"""Every citation of the project's documentation resolves: a reader can follow it to the text it names.

Code, tests and pages cite the documentation as ``docs/PAGE.md#ANCHOR`` (for example ``docs/rules.md#r4``,
a reading of the rules, or ``docs/architecture.md#layers``); the Markdown pages link to each other's
sections as ``[text](PAGE.md#ANCHOR)``; a few docstrings name a README section as ``README · Heading``.
An anchor is either an explicit ``<a id="...">`` or a heading's GitHub anchor. The documents the project
once cited from outside the repository are cited no more.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SKIPPED_DIRS = {
    ".git",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".tools",
    ".venv",
}
TEXT_SUFFIXES = {
    ".py",
    ".pyi",
    ".md",
    ".toml",
    ".yml",
    ".yaml",
    ".js",
    ".html",
    ".css",
    ".proto",
    ".txt",
    ".cfg",
}

DOCS_CITATION = re.compile(r"\bdocs/([\w.-]+\.md)#([\w-]+)")
PAGE_LINK = re.compile(r"\]\(([^)\s#]*\.md)?#([^)\s]+)\)")
README_CITATION = re.compile(r"\bREADME · ")
OUTSIDE_DOCUMENT = re.compile(r"\b(RULINGS|DESIGN)\b")


def repository_files() -> list[Path]:
    """Every text file of the project: its code, tests, pages, configuration and CI script."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [name for name in dirs if name not in SKIPPED_DIRS and not name.endswith(".egg-info")]
        for name in files:
            path = Path(folder) / name
            if path.suffix in TEXT_SUFFIXES or path.relative_to(ROOT).parts[0] == ".ci":
                found.append(path)
    return sorted(found)


def heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors of a Markdown page: explicit ``<a id>``/``<a name>`` tags and its headings' anchors
    (numbered ``-1``, ``-2`` … when a heading repeats), leaving out lines inside code blocks."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        found.update(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", line))
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            anchor = heading_anchor(heading.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")
    return frozenset(found)


def headings(page: Path) -> list[str]:
    """The headings of a Markdown page, as written, outside code blocks."""
    found, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found


def unresolved(path: Path, text: str) -> list[str]:
    """The citations and section links in ``text`` (the content of ``path``) that name no existing anchor,
    and every citation of a document from outside the repository."""
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{number}"
        for page, anchor in DOCS_CITATION.findall(line):
            target = ROOT / "docs" / page
            if not target.is_file():
                problems.append(f"{where}: docs/{page} does not exist")
            elif anchor not in anchors(target):
                problems.append(f"{where}: docs/{page} has no anchor #{anchor}")
        if path.suffix == ".md":
            for page, anchor in PAGE_LINK.findall(line):
                target = (path.parent / page).resolve() if page else path
                if not target.is_file():
                    problems.append(f"{where}: the link to {page} leads nowhere")
                elif anchor not in anchors(target):
                    problems.append(f"{where}: {page or path.name} has no anchor #{anchor}")
        for match in README_CITATION.finditer(line):
            rest = line[match.end() :]
            if not any(rest.startswith(heading) for heading in headings(ROOT / "README.md")):
                problems.append(f"{where}: the README has no section {rest!r}")
        for match in OUTSIDE_DOCUMENT.finditer(line):
            problems.append(f"{where}: {match.group(1)} names a document outside the repository")
    return problems


def test_every_citation_resolves() -> None:
    problems = []
    for path in repository_files():
        if path == Path(__file__).resolve():
            continue
        problems += unresolved(path, path.read_text(encoding="utf-8", errors="replace"))
    assert problems == []


def test_the_citations_are_found_where_the_code_makes_them() -> None:
    """The scan reaches the code, the tests and the pages, and finds the citations they make."""
    cited = {
        (path.relative_to(ROOT).parts[0], page)
        for path in repository_files()
        for page, _ in DOCS_CITATION.findall(path.read_text(encoding="utf-8", errors="replace"))
    }
    assert {("engine", "rules.md"), ("tests", "rules.md"), ("tests", "architecture.md")} <= cited


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("see docs/rules.md#r999 for it", "docs/rules.md has no anchor #r999"),
        ("see docs/missing.md#r1", "docs/missing.md does not exist"),
        ("(RULINGS 4)", "RULINGS names a document outside the repository"),
        ("(DESIGN · Layers)", "DESIGN names a document outside the repository"),
        ("README · A section that is not there", "the README has no section"),
    ],
)
def test_a_citation_that_does_not_resolve_is_reported(text: str, problem: str) -> None:
    problems = unresolved(ROOT / "engine" / "example.py", f"# {text}\n")
    assert len(problems) == 1 and problem in problems[0] and "engine/example.py:1" in problems[0]


def test_a_broken_section_link_in_a_page_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A section\n\n[here](#a-section), [there](#nowhere), [x](other.md#y)\n")
    problems = unresolved(page, page.read_text())
    assert len(problems) == 2
    assert "has no anchor #nowhere" in problems[0] and "other.md leads nowhere" in problems[1]


def test_the_readings_are_numbered_in_order_each_with_its_anchor() -> None:
    """Citations depend on the numbers: readings R1, R2, … follow one another, each under its anchor."""
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    numbers = [int(n) for n in re.findall(r"^### R(\d+) · ", text, flags=re.MULTILINE)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 18
    for number in numbers:
        assert re.search(rf"<a id=\"r{number}\"></a>\n### R{number} · ", text), f"R{number} has no anchor"


def test_the_headings_get_githubs_anchors() -> None:
    assert heading_anchor("The search bot: a yardstick that simulates") == (
        "the-search-bot-a-yardstick-that-simulates"
    )
    assert heading_anchor("2026-12-04 · The event loop") == "2026-12-04--the-event-loop"
