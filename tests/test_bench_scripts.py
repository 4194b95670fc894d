"""Every benchmark script still imports (a renamed core function must not leave a figure's command
broken until someone reruns it)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("script", sorted([*BENCH.glob("*.py"), *BENCH.glob("reliability/*.py")]), ids=lambda path: path.stem)
def test_bench_script_imports(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))  # the scripts import their sibling helpers
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None)) or script.stem in {"decision_workloads", "question_rules"}  # helpers the scripts import
