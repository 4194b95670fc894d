"""The project explains itself: docs/method.md is in the project, and what points into docs/ exists.

Code, tests and documents cite the method as ``method.md §N``; every such N must be a numbered
section of docs/method.md (the numbers are stable: §1-§13). The index docs/README.md and the
README link only to files that exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
METHOD = ROOT / "docs" / "method.md"
CITED_FOLDERS = ("prefeval_core", "ui", "pages", "tests", "bench", "scripts", "docs")


def method_sections() -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^## (\d+)\. (.+)$", METHOD.read_text(encoding="utf-8"), re.M)}


def citing_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "app.py"]
    for folder in CITED_FOLDERS:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md") and p.is_file()]
    return files


def test_method_has_its_thirteen_sections_in_order() -> None:
    sections = method_sections()
    assert list(sections) == list(range(1, 14))
    assert sections[4].startswith("The Bayesian model")
    assert sections[12].startswith("What a study costs")
    assert sections[13] == "The whole answer protected, with every bit of evidence"


def test_every_cited_section_exists() -> None:
    known = set(method_sections())
    wrong = []
    for path in citing_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in re.finditer(r"method\.md ?§ ?(\d+)(?:[-–](\d+))?", text):
            cited = {int(match.group(1))} | ({int(match.group(2))} if match.group(2) else set())
            if not cited <= known:
                wrong.append(f"{path.relative_to(ROOT)}: {match.group(0)}")
    assert not wrong, "citations of sections method.md does not have: " + "; ".join(wrong)


def test_method_cites_the_three_papers() -> None:
    text = " ".join(METHOD.read_text(encoding="utf-8").split())
    for title in (
        "Correction of Errors in Preference Ratings from Automated Metrics for Text Generation",
        "Favi-Score: A Measure for Favoritism in Automated Preference Ratings for Generative AI Evaluation",
        "SEScore2: Learning Text Generation Evaluation via Synthesizing Realistic Mistakes",
    ):
        assert title in text


@pytest.mark.parametrize("document", ["docs/README.md", "docs/method.md", "docs/architecture.md", "README.md"])
def test_relative_links_point_to_files_that_exist(document: str) -> None:
    path = ROOT / document
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8"))
    missing = [t for t in targets if "://" not in t and not (path.parent / t).exists()]
    assert not missing, f"{document} links to missing files: {missing}"
