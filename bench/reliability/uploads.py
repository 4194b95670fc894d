"""The full hostile-upload campaign: thousands of generated uploads, each watched by a timeout.

    .venv/bin/python bench/reliability/uploads.py                     # 2,600 uploads, seed 0, 120 s each
    .venv/bin/python bench/reliability/uploads.py --count 500 --seed 7
    .venv/bin/python bench/reliability/uploads.py --show 123          # what upload 123 is and what happens to it

A worker process builds each upload from its index (``tests/reliability/upload_corpus.py``,
scale "full": a 201 MiB file, a gzip bomb expanding past 200 MiB, a 20,000-column file, ...)
and runs every check of ``tests/reliability/upload_checks.py`` on it (load_dataset, the
validate CLI in-process, describe and the CSV exports for accepted files). The parent waits
at most ``--timeout`` seconds per upload; a worker that does not answer in time is killed,
the upload counted as a hang, and a fresh worker goes on with the next one. Prints the
figures (docs/reliability.md) and the command that made them; exit code 1 unless all
failure counts are zero.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shlex
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.reliability.upload_checks import CampaignFigures, UploadOutcome, check_upload  # noqa: E402
from tests.reliability.upload_corpus import hostile_upload  # noqa: E402


def _worker(connection: Connection, seed: int) -> None:
    """Check the uploads whose indices arrive on ``connection``; answer with each outcome."""
    from prefeval_core.runtime import configure_jax

    configure_jax(x64=True)
    with tempfile.TemporaryDirectory(prefix="prefeval-uploads-") as scratch:
        while True:
            index = connection.recv()
            if index is None:
                return
            connection.send(check_upload(hostile_upload(index, seed=seed, scale="full"), Path(scratch)))


class _Watched:
    """A worker process and the pipe to it."""

    def __init__(self, seed: int):
        context = mp.get_context("spawn")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(child, seed), daemon=True)
        self.process.start()

    def check(self, index: int, timeout: float) -> UploadOutcome | None:
        """The outcome, or ``None`` if the worker gave none within ``timeout`` seconds."""
        self.connection.send(index)
        if not self.connection.poll(timeout):
            return None
        outcome = self.connection.recv()
        assert isinstance(outcome, UploadOutcome)
        return outcome

    def kill(self) -> None:
        self.process.kill()
        self.process.join()

    def stop(self) -> None:
        self.connection.send(None)
        self.process.join(timeout=30)


def run(count: int, seed: int, timeout: float, start: int = 0) -> CampaignFigures:
    figures = CampaignFigures()
    worker = _Watched(seed)
    started = time.perf_counter()
    for index in range(start, start + count):
        try:
            outcome = worker.check(index, timeout)
        except (EOFError, BrokenPipeError, ConnectionResetError):  # the worker died (e.g. killed for memory)
            outcome = UploadOutcome(index, hostile_upload(index, seed=seed).case, "?", "traceback", 0.0, detail="worker died")
            worker.kill()
            worker = _Watched(seed)
        if outcome is None:
            figures.add_hang(index, hostile_upload(index, seed=seed).case)
            worker.kill()
            worker = _Watched(seed)
        else:
            figures.add(outcome)
        done = index - start + 1
        if done % 100 == 0:
            progress = f"  {done:,} uploads, {time.perf_counter() - started:,.0f} s, {len(figures.failures)} failures"
            print(progress, file=sys.stderr, flush=True)
    worker.stop()
    return figures


def show(index: int, seed: int) -> None:
    upload = hostile_upload(index, seed=seed, scale="full")
    print(f"upload {index}: {upload.case}, {upload.name}, {len(upload.data):,} bytes, expect {upload.expect}, flaw {upload.flaw}")
    print(repr(upload.data[:300]))
    with tempfile.TemporaryDirectory() as scratch:
        print(check_upload(upload, Path(scratch)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2_600, help="uploads (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default %(default)s)")
    parser.add_argument("--start", type=int, default=0, help="first upload index (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per upload before it counts as a hang (default %(default)s)")
    parser.add_argument("--show", type=int, metavar="INDEX", help="build and check one upload, and print what happened")
    args = parser.parse_args()
    if args.show is not None:
        show(args.show, args.seed)
        return 0
    started = time.perf_counter()
    figures = run(args.count, args.seed, args.timeout, args.start)
    command = " ".join([".venv/bin/python", "bench/reliability/uploads.py", *map(shlex.quote, sys.argv[1:])])
    print(f"$ {command}")
    print(
        f"{figures.uploads:,} uploads in {time.perf_counter() - started:,.0f} s (seed {args.seed}, {args.timeout:.0f} s per upload, "
        f"{os.cpu_count()} cores)"
    )
    print(figures.table())
    for failure in figures.failures:
        print("FAIL", failure)
    return 0 if figures.clean else 1


if __name__ == "__main__":
    sys.exit(main())
