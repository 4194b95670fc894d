"""The annotation store's durability and concurrency campaign, per engine (issues 13 and 14):
prints figures, asserts nothing (the fast subset with assertions is in tests/reliability/).

Per engine (SQLite file; a throwaway PostgreSQL 15 cluster started here):

1. concurrent writers: W processes released together, N judgments each, committed one by one
   (every fifth sent twice): judgments reported committed, stored, lost, duplicated, seconds;
2. kill -9: K writers each killed with SIGKILL after a random 0.05-0.6 s (seeded): judgments
   they reported committed, lost, duplicated, SQLite integrity check;
3. two processes importing the same 300-row file at once: stored, added, already there;
4. kill -9 of imports: I imports of a new 20,000-row file each killed after a random 0.01-0.8 s:
   how many stored the file completely, not at all, or in part (an import is one transaction);
5. one writer alone: milliseconds per committed judgment (the cost of one ``Store.add``).

Usage (from the repository root)::

    .venv/bin/python bench/bench_store.py [--writers 4] [--per-writer 500] [--kills 50] [--import-kills 10] \
        [--engines sqlite,postgresql] [--seed 0]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prefeval_core.store import Store
from tests.postgres_cluster import PostgresCluster
from tests.reliability.store_campaign import campaign_judgment, concurrent_imports, concurrent_writers, kill_imports, kill_writers

SOLO_JUDGMENTS = 300


def solo_ms(url: str) -> float:
    """Milliseconds per judgment for one writer storing ``SOLO_JUDGMENTS`` one by one."""
    store = Store.at(url)
    started = time.perf_counter()
    for k in range(SOLO_JUDGMENTS):
        store.add(campaign_judgment(999, k))
    elapsed = time.perf_counter() - started
    store.dispose()
    return 1000 * elapsed / SOLO_JUDGMENTS


def run_engine(engine: str, url: str, folder: Path, args: argparse.Namespace) -> list[str]:
    writers = concurrent_writers(url, args.writers, args.per_writer)
    kills = kill_writers(url, args.kills, seed=args.seed)
    imports = concurrent_imports(url, folder)
    killed = kill_imports(url, folder, args.import_kills, seed=args.seed)
    return [
        f"| {engine} | writers | {writers.writers} x {writers.per_writer} | reported {writers.reported:,}, stored {writers.stored:,} "
        f"| **{writers.lost}** | **{writers.duplicated}** | {writers.seconds:.1f} s |",
        f"| {engine} | kill -9 | {kills.kills} kills | reported {kills.reported:,}, survived {kills.reported - kills.lost:,} "
        f"(integrity check: {kills.integrity}) | **{kills.lost}** | **{kills.duplicated}** | {kills.seconds:.1f} s |",
        f"| {engine} | same file imported by {imports.processes} at once | {imports.rows} rows | stored {imports.stored}, "
        f"added {imports.added}, already there {imports.already_there} | **{max(imports.rows - imports.stored, 0)}** "
        f"| **{max(imports.stored - imports.rows, 0)}** | |",
        f"| {engine} | kill -9 of imports | {killed.kills} kills x {killed.rows:,} rows | {killed.complete} complete, "
        f"{killed.empty} empty, {killed.partial} partial | **{killed.partial}** partial | | |",
        f"| {engine} | one writer alone | {SOLO_JUDGMENTS} judgments | {solo_ms(url):.1f} ms per committed judgment | | | |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--per-writer", type=int, default=500)
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--import-kills", type=int, default=10)
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("command:", shlex.join([".venv/bin/python", "bench/bench_store.py", *sys.argv[1:]]))
    rows = ["| engine | check | size | what the store holds | lost | duplicated | time |", "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="prefeval-bench-store-") as tmp:
        folder = Path(tmp)
        for engine in args.engines.split(","):
            if engine == "sqlite":
                rows += run_engine("SQLite", f"sqlite:///{folder / 'annotations.sqlite'}", folder, args)
            else:
                cluster = PostgresCluster.start()
                try:
                    rows += run_engine("PostgreSQL 15", cluster.fresh_database(), folder, args)
                finally:
                    cluster.stop()
    print("\n".join(rows))


if __name__ == "__main__":
    main()
