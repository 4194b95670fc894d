"""The import contract (pyproject.toml ``[tool.importlinter]``, docs/architecture.md): the core's
layers import only downwards, and the shells (CLI, notebook API, dashboard) go through
``workflow``. ``lint-imports`` checks it; these tests run it on the project and prove that it
fails on a planted violation of each contract."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
SHELL_MAY_IMPORT = tuple(f"prefeval_core.{name}" for name in ("workflow", "errors", "vocabulary", "runtime", "figures"))
"""What a shell may import from the core (the "door" contract's complement)."""


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-logo", "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _copy_project(tmp_path: Path) -> Path:
    for folder in ("prefeval_core", "ui", "pages"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_project_keeps_its_import_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def test_a_shell_importing_past_the_door_breaks_the_contract(tmp_path: Path) -> None:
    copy = _copy_project(tmp_path)
    (copy / "ui" / "planted.py").write_text("from prefeval_core.store import open_store\n")
    result = _lint(copy)
    assert result.returncode == 1
    assert "ui is not allowed to import prefeval_core.store" in result.stdout
    assert "ui.planted -> prefeval_core.store" in result.stdout


def test_an_upward_import_in_the_core_breaks_the_layers(tmp_path: Path) -> None:
    copy = _copy_project(tmp_path)
    (copy / "prefeval_core" / "data" / "planted.py").write_text("from prefeval_core.protocol.table import StudyTable\n")
    result = _lint(copy)
    assert result.returncode == 1
    assert "prefeval_core.data.planted -> prefeval_core.protocol.table" in result.stdout


@pytest.mark.parametrize("script", ["app.py"])
def test_the_dashboards_entry_script_goes_through_the_door_too(script: str) -> None:
    """``app.py`` is a script, not a package the linter can take: its imports are read here."""
    tree = ast.parse((ROOT / script).read_text())
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    core = [name for name in imported if name.startswith("prefeval_core")]
    assert all(name.startswith(SHELL_MAY_IMPORT) for name in core), core


def test_the_architecture_page_draws_the_graph_the_contract_checks() -> None:
    """docs/architecture.md's diagram is the output of ``scripts/import_graph.py --mermaid``, whose
    layers are read from the contract: a changed import between units means regenerating it."""
    drawn = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "import_graph.py"), "--mermaid"], capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()
    assert drawn in (ROOT / "docs" / "architecture.md").read_text()
    assert "upward" not in drawn  # no import goes up a layer
