"""A short load test of a live study (issue 22 item 5; ``bench/bench_load.py`` is the long one):
10 annotators in one headless Chromium rate at once for ~10 s while the lead's Protocol page
reloads, on SQLite and on PostgreSQL; nothing lost, nothing stored twice. Latencies are printed,
not asserted (a loaded CI machine is slow, not wrong)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ui.browser import CHROMIUM

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_load", ROOT / "bench" / "bench_load.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_load", module)  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_ten_annotators_at_once_lose_nothing(store: str) -> None:
    bench = _bench()
    if store == "postgres":
        from tests.postgres_cluster import PostgresUnavailable, postgres_bindir

        try:
            postgres_bindir()
        except PostgresUnavailable as missing:
            if os.environ.get("CI"):
                raise
            pytest.skip(str(missing))
    result = bench.run_load(store, annotators=10, seconds=10.0, refresh=4.0, pause=1.0)  # a slower hand: CI machines are busy
    print(bench.HEADER, result.line(), sep="\n")
    assert sum(result.pressed.values()) >= 10 and len(result.pressed) == 10  # every annotator judged
    assert result.lost == 0 and result.unconfirmed == 0
    assert result.duplicated == 0
    assert result.stored == result.pressed
    assert result.protocol_reloads >= 1
