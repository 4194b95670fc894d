"""Checks of the several-metric design (docs/model.md): conditional independence, parameters against
data, and decisions against the full human evaluation on SummEval relevance.

    .venv/bin/python bench/bench_joint_design.py

1. **Conditional independence** of pairs of SummEval's LLM judges given the human outcome (the
   Dawid–Skene assumption), over every (pair of systems, item) with all three outcomes: the
   conditional mutual information ``I(c1; c2 | h)`` in bits, the unconditional ``I(c1; c2)``, and the
   rate at which the two judges agree given ``h`` against the rate conditional independence predicts.
2. **Parameters against data**: free parameters and Dirichlet pseudo-counts per mixture column of the
   two designs, against the revealed items per column at the protocol's early rounds.
3. **Decisions** of human only, each judge alone and the judges together (Dawid–Skene) after revealing
   R human outcomes per pair (5 seeds), against the human reference on all human outcomes
   (method.md §6 error types).
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from prefeval_core.runtime import configure_jax  # noqa: E402

configure_jax(x64=True)

import numpy as np  # noqa: E402
from decision_workloads import summeval_joint_counts  # noqa: E402

from prefeval_core.decision import decide_counts, decide_joint, decision_from_theta, human_only_theta  # noqa: E402
from prefeval_core.diagnostics.comparison import error_frequencies, error_types, human_reference_outcomes  # noqa: E402
from prefeval_core.pairs.counts import JointCounts, pattern_codes  # noqa: E402

JUDGES = ("gpt-4-0314-rts:relevance", "llama-2-70b-chat-hf-rts:relevance", "gpt-3.5-turbo-0301-mcq:relevance")
SHORT = {JUDGES[0]: "gpt-4", JUDGES[1]: "llama-70b", JUDGES[2]: "gpt-3.5-mcq"}
COMMAND = ".venv/bin/python bench/bench_joint_design.py"


def conditional_independence() -> None:
    everything = summeval_joint_counts(JUDGES, 10**6, 0)  # every human outcome revealed: revealed[p, pattern, h]
    table = everything.revealed.sum(axis=0)  # (64, 3) over all pairs
    codes = pattern_codes(3)  # pattern index -> (c0, c1, c2), 3 = no outcome
    print(f"\n### Conditional independence of LLM judges given the human outcome (SummEval relevance; `{COMMAND}`)\n")
    print("| judges | items | I(c1; c2 \\| h), bits | I(c1; c2), bits | agree given h: observed | agree given h: if independent |")
    print("|---|---:|---:|---:|---:|---:|")
    for a, b in itertools.combinations(range(3), 2):
        joint = np.zeros((3, 3, 3))  # (c_a, c_b, h)
        for index, (c0, c1, c2) in enumerate(codes):
            c = (c0, c1, c2)
            if c[a] < 3 and c[b] < 3:
                joint[c[a], c[b]] += table[index]
        total = joint.sum()
        p = joint / total
        p_h = p.sum(axis=(0, 1))
        p_ah, p_bh = p.sum(axis=1), p.sum(axis=0)  # (c_a, h), (c_b, h)
        with np.errstate(divide="ignore", invalid="ignore"):
            cmi = np.nansum(p * np.log2(p * p_h[None, None, :] / (p_ah[:, None, :] * p_bh[None, :, :])))
            p_ab = p.sum(axis=2)
            mi = np.nansum(p_ab * np.log2(p_ab / (p_ab.sum(1, keepdims=True) * p_ab.sum(0, keepdims=True))))
        agree = sum(p[c, c].sum() for c in range(3))
        expected = sum((p_ah[c] * p_bh[c] / np.where(p_h > 0, p_h, 1)).sum() for c in range(3))
        print(f"| {SHORT[JUDGES[a]]} & {SHORT[JUDGES[b]]} | {int(total)} | {cmi:.3f} | {mi:.3f} | {agree:.3f} | {expected:.3f} |")


def parameters() -> None:
    print(f"\n### Parameters against data (`{COMMAND}`)\n")
    print("| k | Dawid–Skene: parameters | pseudo-counts per column | joint 3^k categorical: parameters | pseudo-counts per column |")
    print("|---:|---:|---:|---:|---:|")
    for k in (1, 2, 3):
        print(f"| {k} | {2 + 6 * k} | {3} (each of 3k columns) | {2 + 3 * (3**k - 1)} | {3**k} (each of 3 columns) |")
    print(
        "\nRevealed items per column (human outcome h) after R reveals: about R p_h, e.g. 3-5 at R = 10 and 10-15 at R = 30 "
        "on SummEval (p_= is small). With 3^k = 27 pseudo-counts per column (k = 3) the joint design's columns stay "
        "within a few counts of their flat prior until R is in the hundreds."
    )


def decisions(reveals: tuple[int, ...], seeds: int) -> None:
    print(f"\n### Decisions against the full human evaluation, SummEval relevance, 120 pairs ({seeds} seeds; `{COMMAND}`)\n")
    print("| revealed per pair | evaluation | correct | inversions | insertions | omissions | seconds |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    everything = summeval_joint_counts(JUDGES, 10**6, 0)
    reference = human_reference_outcomes(everything.n)
    for revealed in reveals:
        rows: dict[str, list[tuple[float, float, float, float, float]]] = {}
        for seed in range(seeds):
            counts = summeval_joint_counts(JUDGES, revealed, seed)
            variants: list[tuple[str, JointCounts | None]] = [("human only", None)]
            variants += [(f"{SHORT[m]} alone", _only(counts, j)) for j, m in enumerate(JUDGES)]
            variants += [("gpt-4 + llama-70b", _only(counts, 0, 1)), ("all three", counts)]
            for label, variant in variants:
                start = time.perf_counter()
                if variant is None:
                    decided = decision_from_theta(human_only_theta(counts.n), 0.05)
                elif variant.k == 1:
                    decided = decide_counts(variant.triples(0), seed=seed).decision
                else:
                    decided = decide_joint(variant, seed=seed).decision
                seconds = time.perf_counter() - start
                f = error_frequencies(error_types(decided, reference))
                rows.setdefault(label, []).append((f.correct, f.inversion, f.insertion, f.omission, seconds))
        for label, values in rows.items():
            mean = np.mean(values, axis=0)
            print(f"| {revealed} | {label} | {mean[0]:.3f} | {mean[1]:.3f} | {mean[2]:.3f} | {mean[3]:.3f} | {mean[4]:.2f} |", flush=True)


def _only(counts: JointCounts, *keep: int) -> JointCounts:
    result = counts
    for j in sorted(set(range(counts.k)) - set(keep), reverse=True):
        result = result.without(j)
    return result


def main() -> None:
    conditional_independence()
    parameters()
    decisions((10, 30), seeds=5)


if __name__ == "__main__":
    main()
