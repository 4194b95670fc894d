"""How long installing prefeval takes: the wheel, a fresh venv, the install, the first commands.

    .venv/bin/python bench/bench_install.py            # uv, with uv's cache as scripts/setup-env.sh left it
    .venv/bin/python bench/bench_install.py --cold     # also uv with an empty cache (downloads everything)
    .venv/bin/python bench/bench_install.py --pip      # also `pip install <wheel>` (pip's cache never hits here)

Every step runs in a new temporary folder, outside the clone; the figures are wall seconds of one
run each (the machine is shared: repeat when it is quiet). Prints a Markdown table and the command.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UV = Path(sys.executable).parent / "uv"
LEFT_OUT = ("PYTHONPATH", "VIRTUAL_ENV", "JAX_ENABLE_X64", "XLA_FLAGS", "PYTHONDONTWRITEBYTECODE")


def timed(rows: list[tuple[str, float]], label: str, command: list[str], cwd: Path, **env: str) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in LEFT_OUT} | env
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=environment, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows.append((label, time.perf_counter() - start))


def uv_install(rows: list[tuple[str, float]], wheel: Path, work: Path, name: str, **env: str) -> Path:
    venv = work / name
    timed(rows, f"{name}: uv venv", [str(UV), "venv", "--python", sys.executable, str(venv)], work, **env)
    install = [str(UV), "pip", "install", "--python", str(venv / "bin" / "python"), "-c", str(ROOT / "requirements.txt"), str(wheel)]
    timed(rows, f"{name}: uv pip install wheel + runtime dependencies", install, work, **env)
    return venv


def first_commands(rows: list[tuple[str, float]], venv: Path, work: Path, name: str) -> None:
    prefeval = str(venv / "bin" / "prefeval")
    timed(rows, f"{name}: prefeval --version (first run, writes bytecode)", [prefeval, "--version"], work)
    timed(rows, f"{name}: prefeval --version (second run)", [prefeval, "--version"], work)
    sample = str(ROOT / "sample_data" / "summeval")
    replay = [prefeval, "replay", "--data", sample, "--human", "human:relevance", "--metric", "rougeL", "--json"]
    timed(rows, f"{name}: prefeval replay (SummEval, rougeL)", replay, work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="also install with an empty uv cache")
    parser.add_argument("--pip", action="store_true", help="also install with pip")
    args = parser.parse_args()
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        timed(rows, "uv build --wheel", [str(UV), "build", "--wheel", "--out-dir", str(work / "dist"), str(ROOT)], work)
        (wheel,) = (work / "dist").glob("*.whl")
        venv = uv_install(rows, wheel, work, "warm uv cache")
        first_commands(rows, venv, work, "warm uv cache")
        if args.cold:
            uv_install(rows, wheel, work, "empty uv cache", UV_CACHE_DIR=str(work / "uv-cache"))
        if args.pip:
            pip_venv = work / "pip"
            timed(rows, "pip: python -m venv", [sys.executable, "-m", "venv", str(pip_venv)], work)
            timed(rows, "pip: pip install wheel", [str(pip_venv / "bin" / "pip"), "install", "--quiet", str(wheel)], work)
        wheel_mb = wheel.stat().st_size / 1e6
        venv_mb = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6
        shutil.rmtree(work / "dist")
    print("| step | wall s |\n|---|---:|\n" + "\n".join(f"| {label} | {seconds:.1f} |" for label, seconds in rows))
    print(f"\nwheel {wheel_mb:.1f} MB; fresh venv {venv_mb:,.0f} MB (files linked from uv's cache counted in full)")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
