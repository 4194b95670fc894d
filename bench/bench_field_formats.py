"""Reading the field's own formats at their real sizes: an MQM error file, Arena battles, a Label
Studio export.

    .venv/bin/python bench/bench_field_formats.py [--repeat 3]

Files are generated with seed 0 in a temporary folder, at the size of the real ones:
* ``MQM WMT20-size``: Google's TSV layout for 10 systems x 1,418 segments x 3 raters, a Poisson(1)
  number of errors per (segment, system, rater) (a ``No-error`` row where none), ~100-character
  texts: about 55,000 rows, as ``mqm_newstest2020_ende.tsv``.
* ``Arena 200k``: 200,000 battles as JSON lines (``model_a, model_b, winner, judge,
  question_id, turn`` and the ``anony``/``language``/``tstamp`` fields), 20 models.
* ``Label Studio 5k``: the JSON export of 5,000 comparison tasks prefeval exported, two
  annotations each.

Each is timed in this process (median of ``--repeat`` runs, after one warm-up run) against a
reference measured in the same run: pandas reading the same file with every column as text
(``read_csv(sep="\\t", dtype=str)``, ``read_json(lines=True, dtype=False)``) or ``json.loads``
of the export: parsing alone, none of the checks.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prefeval_core.annotation.blind import BlindKey  # noqa: E402
from prefeval_core.annotation.labelstudio import comparison_project, read_label_studio_export  # noqa: E402
from prefeval_core.data.dataset import load_dataset  # noqa: E402
from prefeval_core.vocabulary.tasks import ComparisonTask  # noqa: E402
from tests.labelstudio_fixtures import Answer, choice, label_studio_export  # noqa: E402

SEVERITIES = [
    ("Accuracy/Mistranslation", "Major"),
    ("Style/Awkward", "Minor"),
    ("Fluency/Punctuation", "Minor"),
    ("Fluency/Grammar", "Neutral"),
]


def mqm_file(path: Path, rng: np.random.Generator) -> int:
    lines = ["system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"]
    for seg in range(1, 1419):
        source = f"Source sentence {seg} " + "x" * 80
        for system in range(10):
            for rater in range(3):
                errors = int(rng.poisson(1.0))
                rows = [SEVERITIES[int(k)] for k in rng.integers(0, len(SEVERITIES), errors)] or [("No-error", "no-error")]
                for category, severity in rows:
                    fields = (
                        f"sys{system}",
                        f"doc{seg // 20}",
                        str(seg % 20 + 1),
                        str(seg),
                        f"rater{rater}",
                        source,
                        f"Ziel <v>{seg}</v> " + "y" * 80,
                    )
                    lines.append("\t".join((*fields, category, severity)) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return len(lines) - 1


def arena_file(path: Path, rng: np.random.Generator, battles: int = 200_000) -> int:
    winners = np.array(["model_a", "model_b", "tie", "tie (bothbad)"])
    models = rng.integers(0, 20, size=(battles, 2))
    models[:, 1] = (models[:, 0] + 1 + rng.integers(0, 19, battles)) % 20
    votes = winners[rng.choice(4, size=battles, p=[0.4, 0.4, 0.15, 0.05])]
    with path.open("w", encoding="utf-8") as out:
        for k in range(battles):
            battle = {"model_a": f"model-{models[k, 0]}", "model_b": f"model-{models[k, 1]}", "winner": str(votes[k])}
            battle |= {"judge": f"arena_user_{k % 5000}", "question_id": f"{k:08x}", "turn": 1, "anony": True, "tstamp": 1.7e9 + k}
            out.write(json.dumps(battle) + "\n")
    return battles


BENCH_KEY = BlindKey(b"the field-format benchmark's key")


def label_studio_file(path: Path, tasks: int = 5_000) -> int:
    requested = [ComparisonTask(f"i{k}", "A", "B") for k in range(tasks)]
    project = comparison_project(requested, "upload:bench", key=BENCH_KEY)
    labels = ["A better", "Equal", "B better", "Both bad"]
    path.write_bytes(
        label_studio_export(
            json.loads(project.tasks_json()),
            lambda t: [Answer(choice(labels[len(t["data"]["prefeval"]["item_id"]) % 4]), user=u) for u in (1, 2)],
        )
    )
    return tasks


def timed(run: Callable[[], object], repeat: int) -> float:
    run()  # warm-up (imports, caches)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"$ {shlex.join([Path(sys.executable).name, *sys.argv])}")
    with tempfile.TemporaryDirectory() as folder:
        mqm, arena, export = Path(folder) / "mqm_wmt20_size.tsv", Path(folder) / "battles.jsonl", Path(folder) / "ls_export.json"
        cases = [
            (
                f"MQM WMT20-size ({mqm_file(mqm, rng):,} rows)",
                mqm,
                lambda: load_dataset(mqm),
                lambda: pd.read_csv(mqm, sep="\t", dtype=str, quoting=3),
            ),
            (
                f"Arena ({arena_file(arena, rng):,} battles)",
                arena,
                lambda: load_dataset(arena),
                lambda: pd.read_json(arena, lines=True, dtype=False),
            ),
            (
                f"Label Studio ({label_studio_file(export):,} tasks)",
                export,
                lambda: read_label_studio_export(export.name, export.read_bytes(), "upload:bench", systems=("A", "B"), key=BENCH_KEY),
                lambda: json.loads(export.read_bytes()),
            ),
        ]
        print(f"{'case':<34} {'MB':>6} {'prefeval s':>11} {'reference s':>12} {'ratio':>6}")
        for name, path, ours, reference in cases:
            mine, theirs = timed(ours, args.repeat), timed(reference, args.repeat)
            print(f"{name:<34} {path.stat().st_size / 1e6:>6.1f} {mine:>11.2f} {theirs:>12.2f} {mine / theirs:>5.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
