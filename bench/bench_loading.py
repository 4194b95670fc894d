"""Loading speed and peak memory of ``load_dataset`` on big and hostile files.

    .venv/bin/python bench/bench_loading.py            # the 1,000,000-row file (plain, gzip) and the big-file cases
    .venv/bin/python bench/bench_loading.py --repeat 5 --big

Each case runs in a fresh Python process (so its peak RSS is its own) that imports the core,
then times ``load_dataset`` on the file; "peak MB" is that process's maximum resident set
(``VmHWM``, imports included: about 120 MB of it is numpy, pandas and pyarrow, measured alone
as "imports only"). The reference, measured in the same run and the same way, is
pandas' C parser reading the same file with every column as text
(``pd.read_csv(path, dtype=str)``): parsing alone, none of the checks, codes or coverage.

Cases (files generated with seed 0 in a temporary folder):
* ``ratings 1M``: a long ratings CSV, ``item_id, system, rater, score``: 100 systems x
  1,000 items x 10 raters (a human with scores 1-5 and nine metrics with two decimals);
  ``ratings 1M gzip``: the same file gzip-compressed.
* ``wide 1M``: the same scores as a wide file: ``item_id, system`` and one column per rater
  (100,000 rows x 12 columns); ``JSONL 1M``: the same rows as JSON Lines (read by Python's
  json module, row by row: slower and bigger, hence JSON's own 1,000,000-row limit).
* ``long fields``: a ratings file plus texts whose 300 outputs are 131,073 characters each.
* ``20,000 columns``, ``100,000-field line``: the outside campaign's two hangs; refused.
* ``--big``: a 4,000,000-row long file (about 70 MB; 16,000,000 cells, near the 20,000,000-cell
  limit), to show how it grows.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RATERS = ("human", "bleu", "chrf", "ter", "comet", "bleurt", "rouge", "meteor", "gpt4", "bert")

_PEAK_MB = """
def peak_mb():  # the high-water mark of this process (ru_maxrss would include the parent's, across fork and exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
"""
_LOAD = (
    _PEAK_MB
    + """
import json, sys, time
from prefeval_core.data.dataset import load_dataset
from prefeval_core.errors import DataError
paths = sys.argv[1:]
started = time.perf_counter()
try:
    ds = load_dataset(paths)
    outcome = f"{len(ds.ratings):,} ratings"
except DataError as exc:
    outcome = "refused: " + str(exc.problems[0])[:90]
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "peak_mb": peak_mb(), "outcome": outcome}))
"""
)
_REFERENCE = (
    _PEAK_MB
    + """
import json, sys, time
import pandas as pd
started = time.perf_counter()
frame = pd.read_csv(sys.argv[1], dtype=str)
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "peak_mb": peak_mb(), "outcome": f"{len(frame):,} rows"}))
"""
)
_IMPORTS = (
    _PEAK_MB
    + """
import json
import prefeval_core.data.dataset
print(json.dumps({"seconds": 0.0, "peak_mb": peak_mb(), "outcome": "-"}))
"""
)


def long_ratings(n_items: int, n_systems: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    items = np.tile(np.repeat(np.arange(n_items), n_systems), len(RATERS)).astype(str)
    systems = np.char.add("s", np.tile(np.arange(n_systems), n_items * len(RATERS)).astype(str))
    raters = np.repeat(np.asarray(RATERS), n_items * n_systems)
    human = rng.integers(1, 6, n_items * n_systems).astype(str)
    metrics = np.char.mod("%.2f", rng.random((len(RATERS) - 1) * n_items * n_systems))
    return pd.DataFrame({"item_id": items, "system": systems, "rater": raters, "score": np.concatenate([human, metrics])})


def write_cases(folder: Path, big: bool) -> dict[str, list[Path]]:
    ratings = long_ratings(1_000, 100, seed=0)
    plain = folder / "ratings.csv"
    ratings.to_csv(plain, index=False)
    packed = folder / "ratings.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes(), compresslevel=6, mtime=0))
    jsonl = folder / "ratings.jsonl"
    ratings.to_json(jsonl, orient="records", lines=True)
    wide = folder / "wide.csv"
    ratings.pivot(index=["item_id", "system"], columns="rater", values="score").reset_index().to_csv(wide, index=False)
    small = long_ratings(30, 10, seed=1)
    texts_folder = folder / "long_fields"
    texts_folder.mkdir()
    small.to_csv(texts_folder / "ratings.csv", index=False)
    pairs = small[["item_id", "system"]].drop_duplicates()
    outputs = [("word " * 26_215)[: 131_073 - 1] + str(k % 10) for k in range(len(pairs))]
    pairs.assign(output=outputs).to_csv(texts_folder / "texts.csv", index=False)
    too_wide = folder / "columns_20000.csv"
    header = "item_id,system," + ",".join(f"r{k}" for k in range(20_000))
    too_wide.write_text(header + "\n" + "i1,A," + ",".join("1" for _ in range(20_000)) + "\n")
    huge_line = folder / "line_100000.csv"
    huge_line.write_text(",".join(str(k) for k in range(100_000)))
    cases = {
        "ratings 1M": [plain],
        "ratings 1M gzip": [packed],
        "wide 1M": [wide],
        "JSONL 1M": [jsonl],
        "long fields": [texts_folder],
        "20,000 columns": [too_wide],
        "100,000-field line": [huge_line],
    }
    if big:
        big_file = folder / "ratings_4m.csv"
        long_ratings(4_000, 100, seed=2).to_csv(big_file, index=False)
        cases["ratings 4M (--big)"] = [big_file]
    return cases


def measure(code: str, paths: list[Path], repeat: int) -> dict[str, object]:
    runs = []
    for _ in range(repeat):
        result = subprocess.run([sys.executable, "-c", code, *map(str, paths)], capture_output=True, text=True, cwd=ROOT, check=True)
        runs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    seconds = [float(r["seconds"]) for r in runs]
    return {
        "median_s": statistics.median(seconds),
        "min_s": min(seconds),
        "peak_mb": max(float(r["peak_mb"]) for r in runs),
        "outcome": runs[-1]["outcome"],
    }


def size_of(paths: list[Path]) -> float:
    files = [f for p in paths for f in ([p] if p.is_file() else p.iterdir())]
    return sum(f.stat().st_size for f in files) / 1024**2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the median and the fastest are shown (default %(default)s)")
    parser.add_argument("--big", action="store_true", help="also a 5,000,000-row file")
    args = parser.parse_args()
    print("$ " + " ".join([".venv/bin/python", "bench/bench_loading.py", *map(shlex.quote, sys.argv[1:])]))
    with tempfile.TemporaryDirectory(prefix="prefeval-bench-loading-") as scratch:
        cases = write_cases(Path(scratch), args.big)
        imports = measure(_IMPORTS, [], 1)
        reference = measure(_REFERENCE, cases["ratings 1M"], args.repeat)
        print(f"imports only (numpy, pandas, pyarrow, the core): peak {imports['peak_mb']:.0f} MB")
        print(f"{'case':<22} {'file MB':>8} {'median s':>9} {'min s':>7} {'peak MB':>8}  outcome")
        print(
            f"{'pd.read_csv (ref.)':<22} {size_of(cases['ratings 1M']):>8.1f} {reference['median_s']:>9.2f} {reference['min_s']:>7.2f} "
            f"{reference['peak_mb']:>8.0f}  {reference['outcome']} (parsing only, the 1M file)"
        )
        for name, paths in cases.items():
            result = measure(_LOAD, paths, args.repeat)
            ratio = float(result["median_s"]) / float(reference["median_s"])
            print(
                f"{name:<22} {size_of(paths):>8.1f} {result['median_s']:>9.2f} {result['min_s']:>7.2f} {result['peak_mb']:>8.0f}  "
                f"{result['outcome']} ({ratio:.2f}x the reference's time)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
