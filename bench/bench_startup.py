"""Start-up time of the command line (issue 22 item 5): prints figures, asserts nothing.

Times ``python -m prefeval_core --version``, ``--help``, the ``prefeval`` entry point
(``prefeval_core.cli:main``) and every command's own ``--help`` (but ``app``'s, which is Streamlit's) as fresh processes, each the median
of ``--repeats`` runs, for every checkout given (the first is "before" when comparing, e.g. the main
checkout against a branch).

Usage (from the repository root)::

    .venv/bin/python bench/bench_startup.py [--roots /work/main .] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ENTRY_POINT = "import sys; from prefeval_core.cli import main; sys.exit(main())"
CASES = {
    "python -m prefeval_core --version": ["-m", "prefeval_core", "--version"],
    "python -m prefeval_core --help": ["-m", "prefeval_core", "--help"],
    "prefeval --version (entry point)": ["-c", ENTRY_POINT, "--version"],
    # a command's own help builds its parser: the options read from the declared setup, the file kinds, the vocabulary
    **{
        f"python -m prefeval_core {command} --help": ["-m", "prefeval_core", command, "--help"]
        for command in (
            "decide",
            "describe",
            "diagnose",
            "labelstudio",
            "metrics",
            "replay",
            "reproduce",
            "requests",
            "studies",
            "train-sescore2",
            "validate",
        )
    },
}


def wall_s(root: Path, argv: list[str], repeats: int) -> float:
    """Median wall time of ``python argv`` run in ``root`` with ``root`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, *argv], cwd=root, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--roots", nargs="+", type=Path, default=[Path(__file__).resolve().parents[1]])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print("| command | " + " | ".join(str(root) for root in args.roots) + " | ratio |")
    print("|---|" + "---:|" * (len(args.roots) + 1))
    for label, argv in CASES.items():
        seconds = [wall_s(root.resolve(), argv, args.repeats) for root in args.roots]
        ratio = f"{seconds[0] / seconds[-1]:.1f}x" if len(seconds) > 1 else ""
        print(f"| {label} | " + " | ".join(f"{s:.2f} s" for s in seconds) + f" | {ratio} |")


if __name__ == "__main__":
    main()
