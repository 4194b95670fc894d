"""``replay --data ... --human R --metric R --budget B --batch N [--json]``: run the protocol on a finished human evaluation."""

from __future__ import annotations

import argparse

from prefeval_core.cli._common import add_data_option, load_from_args, print_json, progress
from prefeval_core.ideal_metric import IDEAL_METRIC_NAME, IDEAL_MU_ROWS
from prefeval_core.protocol.experiment import budget_for, replay_json, replay_table, run_replay
from prefeval_core.protocol.policies import POLICIES
from prefeval_core.protocol.settings import ProtocolSettings
from prefeval_core.protocol.state import ProtocolState


def add_protocol_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``replay`` and ``reproduce``: data, human rater, protocol settings, ``--json``."""
    add_data_option(parser)
    parser.add_argument("--human", required=True, help="human rater, e.g. human:relevance")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--budget", type=int, help="human outcomes that may be revealed in total (default: all available)")
    parser.add_argument("--batch", type=int, default=10, help="human outcomes per undecided pair and round, N (default %(default)s)")
    parser.add_argument("--gamma", type=float, default=0.05, help="significance level (default %(default)s)")
    parser.add_argument("--eps", type=float, default=0.0, help="tie threshold of the metric's score differences (default %(default)s)")
    parser.add_argument("--eps-human", type=float, default=0.0, help="tie threshold of the human score differences (default %(default)s)")
    parser.add_argument("--sampler", choices=("fast", "nuts"), default="fast", help="decision engine sampler (default %(default)s)")
    parser.add_argument("--policy", choices=sorted(POLICIES), default="paper", help="allocation policy (default %(default)s)")
    parser.add_argument(
        "--ideal-items", type=int, default=0, help="metric-only items per pair simulated for the ideal metric (default %(default)s)"
    )


def settings_for(args: argparse.Namespace, metric: str | None, budget: int, seed: int) -> ProtocolSettings:
    """Protocol settings from the options: no metric -> human only (exact); ideal -> mu known; else full model."""
    if metric is None:
        model, mu = "human_only", None
    elif metric == IDEAL_METRIC_NAME:
        model, mu = "known_mu", IDEAL_MU_ROWS
    else:
        model, mu = "full", None
    return ProtocolSettings(
        budget=budget,
        batch=args.batch,
        gamma=args.gamma,
        model=model,  # type: ignore[arg-type]
        mu=mu,
        sampler=args.sampler,
        policy=args.policy,
        seed=seed,
        human=args.human,
        metric=metric,
        eps_human=args.eps_human,
        eps_metric=args.eps,
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="run the annotation-budget protocol on a finished human evaluation",
        description="Replay the annotation-budget protocol (Deriu et al. 2023, Alg. 2): reveal the human outcomes in a seeded "
        "random order, N per undecided pair and round, decide with the metric's help, and compare the result with the full "
        "human evaluation. --metric ideal simulates the paper's ideal metric; without --metric the protocol is human only.",
    )
    parser.add_argument("--metric", help="metric rater (omit for the human-only protocol; 'ideal' for the simulated metric)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the reveal order and the sampler (default %(default)s)")
    add_protocol_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    dataset = load_from_args(args.data, args)
    table = replay_table(
        dataset, args.human, args.metric, eps_human=args.eps_human, eps_metric=args.eps, ideal_seed=args.seed, ideal_items=args.ideal_items
    )
    settings = settings_for(args, args.metric, budget_for(table, budget=args.budget), args.seed)

    def report(state: ProtocolState) -> None:
        undecided = sum(p.undecided for p in state.pairs)
        progress(f"round {state.round}: {state.human_used} human outcomes used, {undecided} of {len(state.pairs)} pairs undecided")

    replay = run_replay(table, settings, progress=report)
    output = replay_json(replay)
    if args.json:
        print_json(output)
        return 0
    summary = output["summary"]
    for pair in output["pairs"]:
        theta = "    -" if pair["theta"] is None else f"{pair['theta']:.3f}"
        print(
            f"{pair['system_a']} {pair['outcome']} {pair['system_b']}  theta {theta}  human used {pair['human_used']:>4}  "
            f"reference {pair['human_reference']}  {pair['error_type']}"
        )
    print(
        f"correct {summary['correct']:.2f}  inversion {summary['inversion']:.2f}  omission {summary['omission']:.2f}  "
        f"insertion {summary['insertion']:.2f}  KLD {summary['kld']:.3f}  annotations {summary['annotation_fraction']:.2f} "
        f"({summary['human_used']} of {summary['human_available']})  rounds {summary['rounds']}  {summary['wall_s']:.2f} s"
    )
    return 0
