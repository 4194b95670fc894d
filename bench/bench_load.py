"""Load test of a live study (issue 22 item 5): many annotators judging at once; prints figures.

One Streamlit server on one store (SQLite under a temporary ``PREFEVAL_DATA_DIR``, or a throwaway
PostgreSQL cluster through ``PREFEVAL_DATABASE_URL``), one headless Chromium
(``/usr/bin/chromium``). The lead starts a live study on SummEval (the sample data) on the
Protocol page; ``--annotators`` annotators, each in a browser context of their own, open the
study's Annotate page and rate the output shown with the key ``4`` for ``--seconds``, while the
lead's Protocol page reloads every ``--refresh`` seconds. A thread polls the store: the latency of
a judgment is from its key press to the first poll that finds it stored.

Reports p50/p95/max latency, judgments pressed / stored per annotator, lost (pressed, never
stored) and duplicated (one annotator's rating of one output stored twice), and the Protocol
page's reloads. An annotator stops early when the request holds nothing more for them.

Usage (from the repository root)::

    .venv/bin/python bench/bench_load.py [--store sqlite postgres] [--annotators 10] [--seconds 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prefeval_core.store import DATA_DIR_ENV, DATABASE_URL_ENV, open_store  # noqa: E402
from prefeval_core.workflow.roles import annotator_link, invite_annotator  # noqa: E402
from ui.browser import CHROMIUM, CHROMIUM_ARGS, served_app  # noqa: E402

DATASET_KEY = "sample:summeval"
TIMEOUT_MS = 120_000
MAIN = '[data-testid="stMain"]'


def annotator_page_url(app_url: str, token: str) -> str:
    """How an annotator's page is opened: their personal link (the token names annotator and study)."""
    return annotator_link(app_url, token)


def invite_all(open_it: Any, study_id: int, names: list[str]) -> dict[str, str]:
    """The lead invites every annotator; their links' tokens by name."""
    store = open_it()
    return {name: invite_annotator(store, study_id, name) for name in names}


RATE_FOUR = re.compile(r"^(Shortcut )?4$")
"""The rating button of level 4 (labelled by its keyboard shortcut alone)."""


@dataclass
class LoadResult:
    """What one load run measured (latencies in seconds)."""

    store: str
    annotators: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    pressed: dict[str, int] = field(default_factory=dict)
    stored: dict[str, int] = field(default_factory=dict)
    duplicated: int = 0
    unconfirmed: int = 0
    protocol_reloads: int = 0
    finished_early: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return sum(max(self.pressed[a] - self.stored.get(a, 0), 0) for a in self.pressed)

    def quantile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else float("nan")

    def line(self) -> str:
        total = sum(self.pressed.values())
        return (
            f"| {self.store} | {self.annotators} | {self.seconds:.0f} | {total} | {sum(self.stored.values())} | "
            f"{self.quantile(0.5):.2f} | {self.quantile(0.95):.2f} | {max(self.latencies, default=float('nan')):.2f} | "
            f"{self.lost} | {self.duplicated} | {self.protocol_reloads} | {len(self.finished_early)} |"
        )


Driven = tuple[dict[str, list[float]], list[str], int]
"""Key-press times per annotator, the annotators who ran out of work, the Protocol page's reloads."""

HEADER = (
    "| store | annotators | seconds | pressed | stored | p50 s | p95 s | max s | lost | duplicated | Protocol reloads | out of work |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


@contextmanager
def store_env(kind: str, workdir: Path) -> Iterator[tuple[dict[str, str], Any]]:
    """The server's environment for a store of ``kind``, and a way to open the same store."""
    if kind == "sqlite":
        env = {DATA_DIR_ENV: str(workdir / "store")}
        yield env, lambda: open_store(workdir / "store")
        return
    from tests.postgres_cluster import PostgresCluster

    cluster = PostgresCluster.start()
    try:
        url = cluster.fresh_database()
        yield {DATABASE_URL_ENV: url}, lambda: _open_url(url)
    finally:
        cluster.stop()


def _open_url(url: str) -> Any:
    """The store at a database URL (``open_store`` reads it from the environment)."""
    before = os.environ.get(DATABASE_URL_ENV)
    os.environ[DATABASE_URL_ENV] = url
    try:
        return open_store()
    finally:
        if before is None:
            del os.environ[DATABASE_URL_ENV]
        else:
            os.environ[DATABASE_URL_ENV] = before


def start_live_study(playwright_page: Any, app_url: str) -> int:
    """The lead starts a live study on the Protocol page; its id (from the page's address)."""
    from playwright.sync_api import expect

    playwright_page.goto(f"{app_url}/protocol")
    playwright_page.get_by_text("Live: people judge what the protocol asks for").click()
    playwright_page.get_by_role("button", name="Start protocol").click()
    expect(playwright_page.locator(MAIN).get_by_text("Ratings used")).to_be_visible(timeout=TIMEOUT_MS)
    match = re.search(r"study=(\d+)", playwright_page.url)
    assert match, playwright_page.url
    return int(match.group(1))


class StoreWatcher(threading.Thread):
    """Polls the store; records when each annotator's n-th rating of the study was first seen."""

    def __init__(self, open_it: Any, study_id: int, every: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.store, self.study_id, self.every = open_it(), study_id, every
        self.seen: dict[tuple[str, int], float] = {}
        self.stop = threading.Event()

    def ratings(self) -> list[Any]:
        return list(self.store.ratings(DATASET_KEY, study_id=self.study_id))

    def wait_for(self, presses: dict[str, list[float]], timeout: float) -> None:
        """Until every pressed judgment has been seen stored, or ``timeout`` seconds (then the missing ones count as lost)."""
        wanted = {(name, n) for name, times in presses.items() for n in range(1, len(times) + 1)}
        until = time.perf_counter() + timeout
        while not wanted <= self.seen.keys() and time.perf_counter() < until:
            time.sleep(self.every)
        time.sleep(min(1.0, timeout))  # a judgment stored twice by a retried submit shows a moment later

    def run(self) -> None:
        while not self.stop.is_set():
            now = time.perf_counter()
            for annotator, count in Counter(r.annotator for r in self.ratings()).items():
                for n in range(1, count + 1):
                    self.seen.setdefault((annotator, n), now)
            time.sleep(self.every)


async def annotate(
    context: Any, app_url: str, token: str, name: str, seconds: float, presses: dict[str, list[float]], pause: float
) -> bool:
    """One annotator rating with the key ``4`` for ``seconds`` once their page is ready; True if the
    request ran out for them."""
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    await page.goto(annotator_page_url(app_url, token))
    main = page.locator(MAIN)
    progress = main.locator('[data-testid="stProgress"]')
    await progress.wait_for()
    await main.get_by_role("button", name=RATE_FOUR).wait_for()
    await main.locator("h1").click()  # the page, not a text field, gets the keys
    await page.wait_for_timeout(1000)  # the buttons' key bindings attach after they are drawn
    times = presses.setdefault(name, [])
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        if await main.get_by_text("Nothing left for you").count():
            return True
        times.append(time.perf_counter())
        await page.keyboard.press("4")
        await progress.filter(has_text=re.compile(rf"\b{len(times)} of \d+ judged by {name}\b")).wait_for()
        await main.get_by_role("button", name=RATE_FOUR).wait_for()
        await page.wait_for_timeout(pause * 1000)  # let the key bindings of the new buttons attach
    return False


async def refresh_protocol(context: Any, app_url: str, study_id: int, done: asyncio.Event, every: float) -> int:
    """The lead's Protocol page, reloaded every ``every`` seconds until ``done``; the number of reloads that drew it."""
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    await page.goto(f"{app_url}/protocol?study={study_id}")
    reloads = 0
    while not done.is_set():
        await page.wait_for_timeout(every * 1000)
        await page.reload()
        await page.locator(MAIN).get_by_text("Ratings used").wait_for()
        reloads += 1
    return reloads


async def drive(
    app_url: str, study_id: int, tokens: dict[str, str], seconds: float, refresh: float, pause: float
) -> tuple[dict[str, list[float]], list[str], int]:
    from playwright.async_api import async_playwright

    presses: dict[str, list[float]] = {}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS))
        names = list(tokens)
        contexts = [await browser.new_context(viewport={"width": 1200, "height": 900}) for _ in range(len(names) + 1)]
        finished = asyncio.Event()
        lead = asyncio.create_task(refresh_protocol(contexts[-1], app_url, study_id, finished, refresh))
        early = await asyncio.gather(
            *(annotate(c, app_url, tokens[n], n, seconds, presses, pause) for c, n in zip(contexts, names, strict=False))
        )
        finished.set()
        reloads = await lead
        await browser.close()
    return presses, [n for n, out in zip(names, early, strict=True) if out], reloads


def run_load(kind: str, annotators: int, seconds: float, refresh: float = 5.0, settle: float = 5.0, pause: float = 0.3) -> LoadResult:
    """One load run on a fresh store of ``kind`` (``sqlite`` or ``postgres``); each annotator waits
    ``pause`` seconds after a screen is drawn before the next key (its key bindings attach late).
    After the last key, up to ``settle`` seconds for the store to show every judgment pressed."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="prefeval-load-") as tmp, store_env(kind, Path(tmp)) as (env, open_it):
        with served_app(Path(tmp) / "server.log", env) as app_url:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS))
                lead = browser.new_page()
                lead.set_default_timeout(TIMEOUT_MS)
                study_id = start_live_study(lead, app_url)
                browser.close()
            tokens = invite_all(open_it, study_id, [f"load{i:02d}" for i in range(annotators)])
            watcher = StoreWatcher(open_it, study_id)
            watcher.start()
            presses, early, reloads = asyncio.run(drive(app_url, study_id, tokens, seconds, refresh, pause))
            watcher.wait_for(presses, settle)
            watcher.stop.set()
            watcher.join()
            ratings = watcher.ratings()
    result = LoadResult(kind, annotators, seconds, protocol_reloads=reloads, finished_early=early)
    result.pressed = {name: len(times) for name, times in presses.items()}
    result.stored = dict(Counter(r.annotator for r in ratings))
    outputs = Counter((r.annotator, r.system, r.item_id) for r in ratings)
    result.duplicated = sum(n - 1 for n in outputs.values() if n > 1)
    for name, times in presses.items():
        for n, pressed_at in enumerate(times, start=1):
            if (name, n) in watcher.seen:
                result.latencies.append(watcher.seen[(name, n)] - pressed_at)
            else:
                result.unconfirmed += 1
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--store", nargs="+", choices=("sqlite", "postgres"), default=["sqlite", "postgres"])
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--refresh", type=float, default=5.0, help="seconds between reloads of the lead's Protocol page")
    args = parser.parse_args()
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(HEADER)
    for kind in args.store:
        result = run_load(kind, args.annotators, args.seconds, args.refresh)
        print(result.line(), flush=True)
        if result.latencies:
            print(f"  {kind}: mean latency {statistics.mean(result.latencies):.2f} s over {len(result.latencies)} judgments")


if __name__ == "__main__":
    main()
