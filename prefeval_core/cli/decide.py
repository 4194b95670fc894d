"""``decide``: the decision function on one pair's counts, or on many pairs from a JSON-lines file.

    python -m prefeval_core decide --n 40,10,50 --confusion "30,5,2;6,3,4;4,2,44" --m 500,100,400 --json
    python -m prefeval_core decide --batch pairs.jsonl --json

Counts are in the order ``>, =, <``; the confusion matrix is written row by row, rows = metric
outcome, columns = human outcome. ``--mu`` (same layout, columns summing to 1) selects the
known-mu model; ``--human-only`` ignores the metric. A batch line is a JSON object with the
keys ``n`` (3 numbers), ``confusion`` (3x3, optional) or ``K``, ``m`` (optional), ``mu``
(optional; a batch uses the known-mu model for all lines or for none) and optionally ``id``.
All pairs of a batch are decided in one call.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from prefeval_core.cli._common import print_json, progress
from prefeval_core.errors import DataError
from prefeval_core.outcomes import SYMBOLS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "decide",
        help="is A better than B? the Bayesian decision function on count triples",
        description="Decide one pair (or a batch) from its counts: human outcomes n, confusion matrix K "
        "(rows = metric, columns = human, order > = <) and metric-only outcomes m (method.md §4).",
    )
    parser.add_argument("--n", metavar="N>,N=,N<", help="human outcomes on the revealed items")
    parser.add_argument(
        "--confusion",
        metavar="ROW;ROW;ROW",
        help="confusion counts K by rows (rows = metric outcome > = <), e.g. '30,5,2;6,3,4;4,2,44'",
    )
    parser.add_argument("--m", metavar="M>,M=,M<", help="metric outcomes on items without a revealed human outcome")
    parser.add_argument("--mu", metavar="ROW;ROW;ROW", help="known mixture matrix (rows = metric, columns = human, columns sum to 1)")
    parser.add_argument("--human-only", action="store_true", help="ignore the metric: exact Dirichlet(n + 1)")
    parser.add_argument("--batch", metavar="FILE.jsonl", help="decide every pair of a JSON-lines file in one call")
    parser.add_argument("--sampler", choices=("fast", "nuts"), default="fast", help="fast (default) or the NUTS reference (slow)")
    parser.add_argument("--gamma", type=float, default=0.05, help="significance level (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")
    parser.add_argument("--small", action="store_true", help="small sampler sizes (quick preview, larger Monte-Carlo error)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.decision import Model, SamplerSettings, decide_pairs

    ids, n, K, m, mu = _read_batch(Path(args.batch)) if args.batch else _read_single(args)
    model: Model = "human_only" if args.human_only else "known_mu" if mu is not None else "full"
    settings = SamplerSettings.small() if args.small else SamplerSettings()
    if args.sampler == "nuts":
        sizes = f"{settings.nuts_chains} chains, {settings.nuts_warmup} warm-up, {settings.nuts_draws} draws"
        progress(f"running NUTS ({sizes}) on {len(n)} pair(s)")
    try:
        result = decide_pairs(n, K, m, model=model, mu=mu, sampler=args.sampler, gamma=args.gamma, seed=args.seed, settings=settings)
    except ValueError as exc:
        raise DataError.single("invalid_counts", str(exc)) from None
    rows = [_row(result, i, ids[i]) for i in range(result.n_pairs)]
    if args.json:
        print_json(rows[0] if not args.batch else {"sampler": result.sampler, "settings": result.settings.as_dict(), "pairs": rows})
        return 0
    for row in rows:
        label = f"{row['id']}: " if row.get("id") is not None else ""
        print(
            f"{label}theta = P(p> > p<) = {row['theta']:.4f} (MC s.e. {row['theta_mc_se']:.4f}, {row['method']}): "
            f"decision {row['decision']}; p = ({', '.join(f'{v:.3f}' for v in row['p_mean'])})"
        )
    print(f"sampler {result.sampler}, gamma {args.gamma}, seed {args.seed}")
    return 0


def _row(result: Any, i: int, pair_id: Any) -> dict[str, Any]:
    def number(x: float) -> float | None:
        return None if math.isnan(x) or math.isinf(x) else float(x)

    row: dict[str, Any] = {} if pair_id is None else {"id": pair_id}
    row.update(
        theta=float(result.theta[i]),
        decision=SYMBOLS[int(result.decision[i])],
        decision_code=int(result.decision[i]),
        p_mean=[float(v) for v in result.p_mean[i]],
        theta_mc_se=float(result.theta_mc_se[i]),
        ess=number(result.ess[i]),
        rhat=number(result.rhat[i]),
        method=result.method[i],
        sampler=result.sampler,
        settings=result.settings.as_dict(),
    )
    return row


def _read_single(args: argparse.Namespace) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    if args.n is None:
        raise DataError.single("missing_counts", "give --n (and --confusion, --m) or --batch FILE.jsonl")
    n = _vector(args.n, "--n")
    K = _matrix(args.confusion, "--confusion") if args.confusion else np.zeros((3, 3))
    m = _vector(args.m, "--m") if args.m else np.zeros(3)
    mu = _matrix(args.mu, "--mu") if args.mu else None
    return [None], n[None], K[None], m[None], None if mu is None else mu[None]


def _read_batch(path: Path) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    ids, ns, Ks, ms, mus = [], [], [], [], []
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise DataError.single("unreadable", f"{path}: {exc.strerror}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            ns.append(np.asarray(record["n"], dtype=float).reshape(3))
            Ks.append(np.asarray(record.get("confusion", record.get("K", np.zeros((3, 3)))), dtype=float).reshape(3, 3))
            ms.append(np.asarray(record.get("m", np.zeros(3)), dtype=float).reshape(3))
            mus.append(None if record.get("mu") is None else np.asarray(record["mu"], dtype=float).reshape(3, 3))
            ids.append(record.get("id"))
        except (json.JSONDecodeError, KeyError, ValueError, TypeError, AttributeError) as exc:
            raise DataError.single("invalid_batch_line", f"{exc}", file=str(path), line=number) from None
    if not ns:
        raise DataError.single("empty_batch", f"{path} holds no pair")
    known = [mu is not None for mu in mus]
    if any(known) and not all(known):
        raise DataError.single("mixed_mu", f"{path}: give mu on every line or on none")
    mu_arr = np.stack(mus) if all(known) else None  # type: ignore[arg-type]
    return ids, np.stack(ns), np.stack(Ks), np.stack(ms), mu_arr


def _vector(text: str, option: str) -> np.ndarray:
    try:
        values = [float(v) for v in text.replace(" ", "").split(",")]
    except ValueError:
        raise DataError.single("invalid_counts", f"{option}: expected three numbers like 40,10,50, got {text!r}") from None
    if len(values) != 3:
        raise DataError.single("invalid_counts", f"{option}: expected three numbers, got {len(values)}")
    return np.asarray(values)


def _matrix(text: str, option: str) -> np.ndarray:
    rows = [r for r in text.replace(" ", "").split(";") if r]
    if len(rows) != 3:
        raise DataError.single("invalid_counts", f"{option}: expected three rows separated by ';', got {len(rows)}")
    return np.stack([_vector(r, option) for r in rows])
