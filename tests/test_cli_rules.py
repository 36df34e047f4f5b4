"""``nertz rules``: the rule book ships inside the package and prints (issue 15)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from cli_helpers import nertz

from cli.main import main
from cli.match_cmd import rules_text

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
