"""``train-sescore2 --corpus FILE --out MODEL [--seed S]``: train the learned metric offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from prefeval_core.cli._common import int_in, positive_int, print_json, progress, seed_int
from prefeval_core.vocabulary.text_metrics import SESCORE2_EPOCHS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train-sescore2",
        help="train an SEScore2-style metric on a plain sentence corpus (no human scores)",
        description="Retrieve neighbours, synthesise perturbed hypotheses with severity scores, and fit a regressor on "
        "sentence-embedding features (method.md §11). Needs the optional extra requirements-learned.txt.",
    )
    parser.add_argument("--corpus", metavar="FILE", help="one sentence per line (default: the shipped English corpus)")
    parser.add_argument("--out", required=True, metavar="MODEL", help="model file to write (.npz)")
    parser.add_argument("--seed", type=seed_int, default=0, help="random seed (default %(default)s)")
    parser.add_argument("--no-severity", action="store_true", help="ablation: every perturbation counts -1")
    parser.add_argument("--epochs", type=int_in(1, 10_000), default=SESCORE2_EPOCHS, help="training epochs (default %(default)s)")
    parser.add_argument("--limit", type=positive_int, metavar="N", help="use only the first N sentences of the corpus")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.text_metrics import train_sescore2_file

    info = train_sescore2_file(
        args.corpus, args.out, seed=args.seed, severity=not args.no_severity, epochs=args.epochs, limit=args.limit, progress=progress
    )
    progress(f"wrote {args.out} ({Path(args.out).stat().st_size / 1024:.0f} KiB)")
    print_json(info)
    return 0
