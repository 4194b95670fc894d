"""The store's durability and concurrency campaign: writer processes, kill -9, concurrent imports.

Each check runs real processes (``python -m tests.reliability.store_campaign <role> ...``)
against a store URL (SQLite file or PostgreSQL) and counts from the store afterwards:

* **concurrent writers**: W processes, released together, each store N judgments one by one
  (comparisons and ratings alternating, every fifth sent twice as a double click would), printing the
  number of each judgment once ``add`` has returned (committed). Lost = reported but absent;
  duplicated = rows beyond one per judgment.
* **kill -9**: a writer is released, killed with SIGKILL after a seeded random delay, and the
  next one starts; everything any of them reported committed must be there, once.
* **concurrent imports**: two processes import the same filled-in request file at once; each
  judgment must be stored once, and the two reports must add up (added + already there).
* **resume**: one process writes a study; a fresh process resumes it (latest state, undo).

Used by ``tests/reliability/test_store_reliability.py`` (a fast subset) and
``bench/bench_store.py`` (the full campaign, with figures).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd
from sqlalchemy import text

from prefeval_core.annotation.left_right import Choice, make_comparison
from prefeval_core.annotation.requests import export_requests_csv, read_annotated_requests, request_frame
from prefeval_core.store import Judgment, Rating, Store, utc_now

ROOT = Path(__file__).resolve().parents[2]
DATASET = "campaign"
IMPORT_DATASET = "campaign-import"
SYSTEMS = ("sysA", "sysB")
CHOICES: tuple[Choice, ...] = ("left", "equal", "right")


# --- the roles, run in their own processes -----------------------------------------------------


def _released() -> None:
    """Say ready, then wait for the go line on stdin (so that processes start writing together)."""
    print("ready", flush=True)
    sys.stdin.readline()


def campaign_judgment(writer: int, k: int) -> Judgment:
    """Judgment ``k`` of writer ``writer``: a comparison for even ``k``, a rating for odd."""
    item, annotator = f"w{writer}-i{k}", f"writer{writer}"
    if k % 2 == 0:
        return make_comparison(DATASET, item, *SYSTEMS, CHOICES[k % 3], annotator, SYSTEMS[k % 4 // 2])
    return Rating(DATASET, item, SYSTEMS[0], float(k % 5 + 1), annotator, utc_now())


def write(url: str, writer: int, count: int) -> None:
    """Store ``count`` judgments one by one (every fifth twice, as a double click would send it);
    print ``k`` once judgment ``k`` is committed."""
    store = Store.at(url)
    _released()
    for k in range(count):
        judgment = campaign_judgment(writer, k)
        store.add(judgment)
        if k % 5 == 0:
            store.add(judgment)  # a double click: must not be stored twice
        print(k, flush=True)


def import_file(url: str, path: str) -> None:
    """Import a filled-in request file; print the result as JSON."""
    store = Store.at(url)
    judgments = read_annotated_requests(Path(path).name, Path(path).read_bytes(), IMPORT_DATASET)
    _released()
    result = store.add_many(judgments)
    print(json.dumps({"added": result.added, "already_there": result.already_there}), flush=True)


def write_study(url: str) -> None:
    """Create a study with a start and three rounds; print its id."""
    store = Store.at(url)
    study = store.create_study(DATASET, "fingerprint", "resumed study", json.dumps({"budget": 30}), judgments_per_item=2)
    store.append_state(study.id, 0, json.dumps({"round": 0}), None, "start", cost=0)
    for round_number in (1, 2, 3):
        state, request = json.dumps({"round": round_number}), json.dumps({"items": round_number})
        store.append_state(study.id, round_number, state, request, cost=10 * round_number)
    print(study.id, flush=True)


def resume_study(url: str, study_id: int) -> None:
    """In a fresh process: the study's latest state, then an undo; print both as JSON."""
    store = Store.at(url)
    latest = store.latest_state(study_id)
    undone = store.undo_state(study_id)
    summary = store.list_studies(DATASET)[0]
    print(json.dumps({
        "latest_round": latest.round if latest else None, "latest_state": latest.state_json if latest else None,
        "undo_round": undone.round if undone else None, "undo_state": undone.state_json if undone else None,
        "per_item": store.study(study_id).judgments_per_item, "summary_rounds": summary.rounds, "summary_cost": summary.cost,
    }), flush=True)  # fmt: skip


# --- the checks, run by the test suite and the benchmark ----------------------------------------


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.store_campaign", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
    )  # fmt: skip


def _wait_ready(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"a campaign process failed to start: {line}{process.stderr.read() if process.stderr else ''}")


def _go(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.write("go\n")
    process.stdin.flush()


def _stored_counts(url: str, dataset: str = DATASET) -> Counter[str]:
    """How many rows each judgment (item, annotator, kind) has in the store, undone ones included."""
    store = Store.at(url)
    rows = Counter(f"c:{j.item_id}:{j.annotator}" for j in store.comparisons(dataset, include_undone=True))
    rows.update(f"r:{j.item_id}:{j.annotator}" for j in store.ratings(dataset, include_undone=True))
    store.dispose()
    return rows


def _key(writer: int, k: int) -> str:
    return f"{'c' if k % 2 == 0 else 'r'}:w{writer}-i{k}:writer{writer}"


def _integrity(url: str) -> Literal["ok", "failed", "n/a"]:
    """SQLite's ``PRAGMA integrity_check`` of the file (PostgreSQL: not applicable, the server's own)."""
    store = Store.at(url)
    if store.dialect != "sqlite":
        return "n/a"
    with store.db.reading() as conn:
        ok = conn.execute(text("PRAGMA integrity_check")).scalar_one() == "ok"
    store.dispose()
    return "ok" if ok else "failed"


@dataclass(frozen=True)
class WriterFigures:
    """Concurrent writers: ``writers`` processes x ``per_writer`` judgments; what the store holds."""

    writers: int
    per_writer: int
    reported: int
    stored: int
    lost: int
    duplicated: int
    seconds: float


def concurrent_writers(url: str, writers: int = 4, per_writer: int = 500) -> WriterFigures:
    started = time.perf_counter()
    processes = [_spawn("write", url, str(w), str(per_writer)) for w in range(writers)]
    for process in processes:
        _wait_ready(process)
    for process in processes:
        _go(process)
    reported: set[str] = set()
    for w, process in enumerate(processes):
        out, err = process.communicate(timeout=600)
        if process.returncode != 0:
            raise RuntimeError(f"writer {w} failed: {err[-2000:]}")
        reported |= {_key(w, int(k)) for k in out.split()}
    stored = _stored_counts(url)
    return WriterFigures(
        writers, per_writer, len(reported), sum(stored.values()), len(reported - set(stored)),
        sum(n - 1 for n in stored.values() if n > 1), time.perf_counter() - started,
    )  # fmt: skip


@dataclass(frozen=True)
class KillFigures:
    """kill -9 of writers: ``kills`` processes killed mid-stream; of the ``reported`` committed
    judgments, ``lost`` were missing afterwards and ``duplicated`` stored twice."""

    kills: int
    reported: int
    lost: int
    duplicated: int
    integrity: Literal["ok", "failed", "n/a"]
    seconds: float


def kill_writers(url: str, kills: int = 10, seed: int = 0, max_delay_s: float = 0.6) -> KillFigures:
    """Start a writer, release it, SIGKILL it after a random delay (seeded), ``kills`` times."""
    started = time.perf_counter()
    rng = random.Random(seed)
    reported: set[str] = set()
    for w in range(kills):
        process = _spawn("write", url, str(w), "100000")
        _wait_ready(process)
        _go(process)
        time.sleep(rng.uniform(0.05, max_delay_s))
        process.send_signal(signal.SIGKILL)
        out, _ = process.communicate(timeout=60)
        # Only whole lines were reported: a number cut by the kill was never finished printing.
        lines = out.split("\n")[:-1] if not out.endswith("\n") else out.split("\n")
        reported |= {_key(w, int(k)) for k in lines if k.strip()}
    stored = _stored_counts(url)
    lost = len(reported - set(stored))
    duplicated = sum(n - 1 for n in stored.values() if n > 1)
    return KillFigures(kills, len(reported), lost, duplicated, _integrity(url), time.perf_counter() - started)


@dataclass(frozen=True)
class ImportFigures:
    """Concurrent imports of one file: ``rows`` judgments in it; what the store holds and what
    the processes said (added and already there, summed)."""

    processes: int
    rows: int
    stored: int
    added: int
    already_there: int


def filled_request_file(path: Path, rows: int, tag: str = "") -> Path:
    """A filled-in comparison request file of ``rows`` judgments by three annotators (named with ``tag``)."""
    tasks = pd.DataFrame({"item_id": [f"item{k // 3}" for k in range(rows)], "system_a": SYSTEMS[0], "system_b": SYSTEMS[1]})
    annotators = [f"ann{k % 3}{tag}" for k in range(rows)]
    frame = request_frame(tasks).assign(label=[">=<"[k % 3] for k in range(rows)], annotator=annotators)
    path.write_bytes(export_requests_csv(frame))
    return path


def concurrent_imports(url: str, folder: Path, rows: int = 300, processes: int = 2) -> ImportFigures:
    path = filled_request_file(folder / "filled.csv", rows)
    workers = [_spawn("import", url, str(path)) for _ in range(processes)]
    for process in workers:
        _wait_ready(process)
    for process in workers:
        _go(process)
    reports = []
    for process in workers:
        out, err = process.communicate(timeout=300)
        if process.returncode != 0:
            raise RuntimeError(f"an import failed: {err[-2000:]}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    stored = sum(_stored_counts(url, IMPORT_DATASET).values())
    return ImportFigures(processes, rows, stored, sum(r["added"] for r in reports), sum(r["already_there"] for r in reports))


@dataclass(frozen=True)
class KilledImportFigures:
    """Imports of ``rows`` judgments killed with SIGKILL at a random moment: how many left the
    file stored ``complete``, not at all (``empty``), or in part (``partial``: must be 0)."""

    kills: int
    rows: int
    complete: int
    empty: int
    partial: int


def kill_imports(url: str, folder: Path, kills: int = 3, rows: int = 20_000, seed: int = 0) -> KilledImportFigures:
    """Import a new file of ``rows`` judgments and SIGKILL the process 0.01-0.8 s (seeded) after
    releasing it, ``kills`` times; an import is one transaction, so all or nothing is stored."""
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    for kill in range(kills):
        before = sum(_stored_counts(url, IMPORT_DATASET).values())
        process = _spawn("import", url, str(filled_request_file(folder / f"killed{kill}.csv", rows, tag=f"-kill{kill}")))
        _wait_ready(process)
        _go(process)
        time.sleep(rng.uniform(0.01, 0.8))
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
        added = sum(_stored_counts(url, IMPORT_DATASET).values()) - before
        outcomes["complete" if added == rows else "empty" if added == 0 else "partial"] += 1
    return KilledImportFigures(kills, rows, outcomes["complete"], outcomes["empty"], outcomes["partial"])


def _run_role(*args: str) -> str:
    process = _spawn(*args)
    out, err = process.communicate(timeout=120)
    if process.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {err[-2000:]}")
    return out.strip()


def resumed_study(url: str) -> dict[str, object]:
    """Write a study in one process and resume it in another; the second one's report."""
    study_id = _run_role("study-write", url)
    return dict(json.loads(_run_role("study-resume", url, study_id)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A role of the store campaign (run by the campaign itself).")
    sub = parser.add_subparsers(dest="role", required=True)
    roles = {"write": ("url", "writer", "count"), "import": ("url", "path"), "study-write": ("url",), "study-resume": ("url", "study_id")}
    for name, params in roles.items():
        role = sub.add_parser(name)
        for param in params:
            role.add_argument(param)
    args = parser.parse_args(argv)
    if args.role == "write":
        write(args.url, int(args.writer), int(args.count))
    elif args.role == "import":
        import_file(args.url, args.path)
    elif args.role == "study-write":
        write_study(args.url)
    else:
        resume_study(args.url, int(args.study_id))


if __name__ == "__main__":
    main()
