"""``nertz rules``: the rule book ships inside the package and prints (issue 15)."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from cli_helpers import nertz

from cli.main import main
from cli.match_cmd import rules_text
from p2p_nertz.rules.book import reflow, rule_topic

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "p2p_nertz" / "rules" / "rules.md"


def test_nertz_rules_prints_the_rule_book_in_the_package(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert out == RULES.read_text(encoding="utf-8") == rules_text()
    assert out.startswith("# How to play Nertz")


def test_nertz_rules_as_a_real_process() -> None:
    done = nertz("rules")
    assert done.returncode == 0, done.stderr
    assert done.stdout == RULES.read_text(encoding="utf-8")
    assert done.stderr == ""


def test_the_rule_book_is_package_data_and_the_only_copy() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "rules/rules.md" in project["tool"]["setuptools"]["package-data"]["p2p_nertz"]
    pointer = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "(../p2p_nertz/rules/rules.md)" in pointer
    assert len(pointer) < len(RULES.read_text(encoding="utf-8")) // 10  # a pointer, no copy


def test_the_readme_links_the_rules_in_the_clone() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](p2p_nertz/rules/rules.md)" in readme
    assert "../shared/RULES.md" not in readme  # no link outside the clone


def test_every_rule_names_its_sources() -> None:
    text = RULES.read_text(encoding="utf-8")
    sources = set(re.findall(r"\[(\d{3})\]", text))
    assert sources == {"000", "001", "002", "003", "004"}
    # Every rule (a bullet of the rule sections) cites a source.
    body = text.split("## The deal", 1)[1].split("## Not rules", 1)[0]
    bullets = [b for b in re.split(r"\n- ", body)[1:] if b.strip()]
    assert len(bullets) > 30
    for bullet in bullets:
        assert re.search(r"\[0\d\d", bullet), bullet


def _words(text: str) -> list[str]:
    """The words of ``text``, without a table's separator rows (their dashes are padding)."""
    return [w for w in text.split() if not re.fullmatch(r"[|\-]+", w)]


def test_the_rule_book_reflowed_to_80_columns_keeps_every_word_and_every_item() -> None:
    # The book is written ~96 wide: an 80-column terminal cut a word on most of its lines.
    book = RULES.read_text(encoding="utf-8")
    assert max(len(line) for line in book.splitlines()) > 80  # (else nothing to show here)
    narrow = reflow(book, 80)
    assert all(len(line) <= 80 for line in narrow.splitlines())
    assert _words(narrow) == _words(book)

    def starts(text: str, pattern: str) -> list[str]:
        return [line for line in text.splitlines() if re.match(pattern, line)]

    assert starts(narrow, "#") == starts(book, "#")
    assert len(starts(narrow, r"\s*(- |\d+\. )")) == len(starts(book, r"\s*(- |\d+\. )"))
    assert reflow(book, 200) == book  # a terminal wide enough: as written


def test_nertz_rules_in_an_80_column_terminal_cuts_no_word() -> None:
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        sys.executable, ["-m", "cli", "rules", "lake"], cwd=str(ROOT), dimensions=(24, 80),
        encoding="utf-8", timeout=60,
    )  # fmt: skip
    out = child.read()
    child.close()
    assert child.exitstatus == 0, out
    lines = out.replace("\r\n", "\n").splitlines()
    assert lines[0] == "### The lake" and all(len(line) <= 80 for line in lines)
    assert _words(out) == _words(rule_topic("lake"))
