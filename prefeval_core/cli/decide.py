"""``decide``: the decision function on one pair's counts, or on many pairs from a JSON-lines file.

    python -m prefeval_core decide --n 40,10,50 --confusion "30,5,2;6,3,4;4,2,44" --m 500,100,400 --json
    python -m prefeval_core decide --batch pairs.jsonl --json

Counts are in the order ``>, =, <``; the confusion matrix is written row by row, rows = metric
outcome, columns = human outcome. ``--mu`` (same layout, columns summing to 1) selects the
known-mu model; ``--human-only`` ignores the metric. A batch line is a JSON object with the
keys ``n`` (3 numbers), ``confusion`` (3x3, optional) or ``K``, ``m`` (optional), ``mu``
(optional; a batch uses the known-mu model for all lines or for none) and optionally ``id``.

A batch is read twice, line by line: first every line is checked (a bad line is reported with
its line number before anything is decided), then the pairs are decided ``--chunk`` at a time and
written as they are decided, with progress on stderr: memory stays bounded and time grows with
the number of pairs. A pair's draws are seeded by its position in the file, so its result does not
depend on ``--chunk``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prefeval_core.cli._common import open_probability, positive_int, print_json, progress, seed_int
from prefeval_core.cli._terminal import print_safe
from prefeval_core.errors import DataError
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.workflow.setup import SAMPLER_WORDS

if TYPE_CHECKING:
    from prefeval_core.workflow.decisions import PairCounts


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "decide",
        help="is A better than B? the Bayesian decision function on count triples",
        description="Decide one pair (or a batch) from its counts: human outcomes n, confusion matrix K "
        "(rows = metric, columns = human, order > = <) and metric-only outcomes m (method.md §4).",
    )
    parser.add_argument("--n", type=_option(_vector, "--n", counts=True), metavar="N>,N=,N<", help="human outcomes on the revealed items")
    parser.add_argument(
        "--confusion",
        type=_option(_matrix, "--confusion", counts=True),
        metavar="ROW;ROW;ROW",
        help="confusion counts K by rows (rows = metric outcome > = <), e.g. '30,5,2;6,3,4;4,2,44'",
    )
    parser.add_argument(
        "--m",
        type=_option(_vector, "--m", counts=True),
        metavar="M>,M=,M<",
        help="metric outcomes on items without a revealed human outcome",
    )
    parser.add_argument(
        "--mu",
        type=_option(_matrix, "--mu", counts=False),
        metavar="ROW;ROW;ROW",
        help="known mixture matrix (rows = metric, columns = human, columns sum to 1)",
    )
    parser.add_argument(
        "--human-only", action="store_true", help="ignore the metric: Dirichlet(n + 1), exact (by NUTS with --sampler nuts, as a check)"
    )
    parser.add_argument("--batch", metavar="FILE.jsonl", help="decide every pair of a JSON-lines file, streamed")
    parser.add_argument("--chunk", type=positive_int, default=256, help="pairs per engine call in a batch (default %(default)s)")
    parser.add_argument("--sampler", choices=tuple(SAMPLER_WORDS), default="fast", help="fast (default) or the NUTS reference (slow)")
    parser.add_argument("--gamma", type=open_probability, default=DEFAULT_GAMMA, help="significance level, in (0, 1) (default %(default)s)")
    parser.add_argument("--seed", type=seed_int, default=0, help="random seed, an integer in [0, 2**63) (default %(default)s)")
    parser.add_argument("--small", action="store_true", help="small sampler sizes (quick preview, larger Monte-Carlo error)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.decisions import DecisionSettings, Model, SamplerSettings, decide_stream, read_batch, scan_batch

    settings = SamplerSettings.small() if args.small else SamplerSettings()
    if args.batch:
        path = Path(args.batch)
        total, known_mu = scan_batch(path)
        pairs: Iterator[PairCounts] = read_batch(path)
    else:
        single = _read_single(args)
        total, known_mu, pairs = 1, single.mu is not None, iter([single])
    model: Model = "human_only" if args.human_only else "known_mu" if known_mu else "full"
    decision_settings = DecisionSettings(model, args.sampler, args.gamma, args.seed, settings)
    if args.sampler == "nuts":
        sizes = f"{settings.nuts_chains} chains, {settings.nuts_warmup} warm-up, {settings.nuts_draws} draws"
        progress(f"running NUTS ({sizes}) on {total} pair(s)")

    def decided(done: int) -> None:
        progress(f"decided {done} of {total} pairs")

    rows = decide_stream(pairs, decision_settings, chunk=args.chunk, progress=decided if args.batch else None)
    if not args.json:
        for row in rows:
            _print_text(row)
        print_safe(f"sampler {args.sampler}, gamma {args.gamma}, seed {args.seed}")
    elif args.batch:
        _print_json_stream(rows, decision_settings.as_dict(), args.sampler)
    else:
        print_json(next(rows))
    return 0


def _print_json_stream(rows: Iterator[dict[str, Any]], settings: dict[str, Any], sampler: str) -> None:
    """The batch's JSON object ``{"sampler", "settings", "pairs": [...]}``, written pair by pair."""
    head = json.dumps({"sampler": sampler, "settings": settings}, indent=2, allow_nan=False)
    sys.stdout.write(head[:-2] + ',\n  "pairs": [')
    for i, row in enumerate(rows):
        sys.stdout.write(("," if i else "") + "\n    " + json.dumps(row, allow_nan=False))
    sys.stdout.write("\n  ]\n}\n")


def _print_text(row: dict[str, Any]) -> None:
    label = f"{row['id']}: " if row.get("id") is not None else ""
    print_safe(
        f"{label}theta = P(p> > p<) = {row['theta']:.4f} (MC s.e. {row['theta_mc_se']:.4f}, {row['method']}): "
        f"decision {row['decision']}; p = ({', '.join(f'{v:.3f}' for v in row['p_mean'])})"
    )


def _read_single(args: argparse.Namespace) -> PairCounts:
    from prefeval_core.workflow.decisions import checked_pair

    if args.n is None:
        raise DataError.single("missing_counts", "give --n (and --confusion, --m) or --batch FILE.jsonl")
    K = args.confusion if args.confusion is not None else np.zeros((3, 3))
    m = args.m if args.m is not None else np.zeros(3)
    return checked_pair(args.n, K, m, args.mu)


def _vector(text: str, option: str) -> np.ndarray:
    try:
        values = [float(v) for v in text.replace(" ", "").split(",")]
    except ValueError:
        raise DataError.single("invalid_counts", f"{option}: expected three numbers like 40,10,50, got {text!r}") from None
    if len(values) != 3:
        raise DataError.single("invalid_counts", f"{option}: expected three numbers, got {len(values)}")
    return np.asarray(values)


def _option(parse: Callable[[str, str], np.ndarray], option: str, *, counts: bool) -> Callable[[str], np.ndarray]:
    """An argparse type: ``parse`` then finite values >= 0 (``counts``: whole numbers below
    2^63); a bad value is a usage error (exit 2), not a traceback or a NaN later."""

    def values(text: str) -> np.ndarray:
        try:
            parsed = parse(text, option)
        except DataError as error:
            raise argparse.ArgumentTypeError(error.problems[0].message.removeprefix(f"{option}: ")) from None
        if not (np.all(np.isfinite(parsed)) and np.all(parsed >= 0)):
            raise argparse.ArgumentTypeError(f"expected finite numbers >= 0, got {text!r}")
        if counts and not (np.all(parsed == np.round(parsed)) and np.all(parsed < 2.0**63)):
            raise argparse.ArgumentTypeError(f"expected whole counts below 2^63, got {text!r}")
        return parsed

    values.__name__ = "counts" if counts else "probabilities"
    return values


def _matrix(text: str, option: str) -> np.ndarray:
    rows = [r for r in text.replace(" ", "").split(";") if r]
    if len(rows) != 3:
        raise DataError.single("invalid_counts", f"{option}: expected three rows separated by ';', got {len(rows)}")
    return np.stack([_vector(r, option) for r in rows])
