"""What a protocol run shows: its status in words and numbers, the table of pairs, theta across
rounds, the decided DAG's inputs, the posterior win rates and the report section — the same for
the dashboard, the HTML report and the command line."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
import plotly.graph_objects as go

from prefeval_core.data.safe_csv import to_safe_csv
from prefeval_core.decision import Model, SamplerSettings, fast_route, metric_contributions, posterior_draws
from prefeval_core.diagnostics.comparison import ERROR_LABELS, OPEN, OPEN_LABEL
from prefeval_core.diagnostics.partial_order import partial_order
from prefeval_core.diagnostics.win_rate import WinRateDensities, win_rate_densities
from prefeval_core.figures.dag import dag_figure
from prefeval_core.figures.report import ReportSection
from prefeval_core.protocol import ProtocolResult, ProtocolState
from prefeval_core.protocol.error_controls import ERROR_CONTROL_RULES, theta_source
from prefeval_core.protocol.question_control import revealed_means
from prefeval_core.protocol.questions import question_pairs
from prefeval_core.protocol.result import NOT_SCORED
from prefeval_core.protocol.settings import OUTCOME_STATISTICS, POOL_STATISTICS
from prefeval_core.sequential.spending import spending_decisions
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE
from prefeval_core.vocabulary.words import first_upper
from prefeval_core.workflow.answers import exclusions
from prefeval_core.workflow.status import study_status

DECISION_WORDS = {BETTER: "> A better", TIE: "undecided", WORSE: "< B better"}
EQUIVALENT_WORDS = "≈ equivalent within δ"


def decision_words(decisions: npt.NDArray[np.int8], equivalent: npt.NDArray[np.bool_]) -> list[str]:
    """Each pair's decision in words: its direction (:data:`DECISION_WORDS`), and where it was shown
    equivalent within the margin δ, :data:`EQUIVALENT_WORDS` (alone when no direction was decided)."""
    return [
        (EQUIVALENT_WORDS if code == TIE else f"{DECISION_WORDS[int(code)]}, {EQUIVALENT_WORDS}") if same else DECISION_WORDS[int(code)]
        for code, same in zip(decisions, equivalent, strict=True)
    ]


NOT_PAIRWISE_WORDS = "— (the tier is decided, not the pair)"
"""A pair's decision under a tier question decided by closed testing, which rules systems out and decides no pair."""


def decides_tier_only(state: ProtocolState) -> bool:
    """Whether the run answers a tier question by closed testing over its systems (question-level
    control), deciding no pair on its own (equivalences within δ aside)."""
    return bool(state.settings.question.entry.tier and state.settings.error_control == "question")


UNIT_WORDS = {"ratings": "ratings", "comparisons": "comparisons"}
WIN_RATE_DRAWS = 4000
"""Posterior draws per pair behind the win-rate plots (MC error of a plotted θ about ±0.008 at θ = 0.5)."""


SCORED_WORDS = (
    "Counted: the question's pairs (top-k: those with a system in the answer or the full evaluation's tier); "
    "while the run goes on, only pairs already decided — an open pair is no error yet."
)
"""What the verdicts count (:attr:`~prefeval_core.protocol.result.ProtocolResult.verdicts`), for a caption."""


def table_verdicts(state: ProtocolState, result: ProtocolResult) -> tuple[str, ...]:
    """Each pair of the study table's verdict against the full evaluation (``result.verdicts`` on the
    question's pairs; not scored, ``""``, on the others): what the figures colour by."""
    table = state.table
    verdicts = np.full(len(table.pairs), NOT_SCORED, dtype=result.verdicts.dtype)
    verdicts[question_pairs(state.settings.question, table.systems, table.pair_systems)] = result.verdicts
    return tuple(str(v) for v in verdicts)


def verdicts_words(result: ProtocolResult) -> str:
    """``Error types over 1 of the question's 120 pairs; 119 open (not decided yet).``"""
    still_open = result.tally()[OPEN]
    words = f"Error types over {int(result.scored.sum())} of the question's {len(result.pairs)} pairs"
    return words + (f"; {still_open} {OPEN_LABEL.lower()}." if still_open else ".")


def verdicts_frame(result: ProtocolResult) -> pd.DataFrame:
    """The Pairs tab's table: pairs per error type over the scored pairs (their share of them), then
    the open pairs (no share: no error yet), from :meth:`~prefeval_core.protocol.result.ProtocolResult.tally`."""
    tally, scored = result.tally(), int(result.scored.sum())
    rows = [(ERROR_LABELS[kind], n, n / scored) for kind, n in tally.items() if kind != OPEN and n]  # type: ignore[index]
    if tally[OPEN]:
        rows.append((OPEN_LABEL, tally[OPEN], float("nan")))
    return pd.DataFrame(rows, columns=["verdict", "pairs", "share of the scored pairs"])


def pairs_frame(state: ProtocolState) -> pd.DataFrame:
    """One row per pair of the question (baseline: the pairs with a baseline): human pair outcomes
    used, latest theta, decision (:func:`decision_words`: equivalence within δ included), evidence,
    posterior mean rates. θ's column says what it is: ``θ =
    P(p> > p<)`` of the outcome rates, or ``θ ≈ P(Δ > 0)`` (the normal approximation) where a score
    statistic is tested (:func:`~prefeval_core.protocol.error_controls.theta_source`)."""
    status = state.status
    used = state.pair_outcomes_used()
    theta = "θ ≈ P(Δ > 0)" if theta_source(state.settings) == "normal" else "θ = P(p> > p<)"
    frame = pd.DataFrame(
        {
            "system A": [a for a, _ in state.table.pairs],
            "system B": [b for _, b in state.table.pairs],
            "human outcomes": used,
            difference_label(state): revealed_means(state),
            theta: status.theta,
            "decision": _pair_words(state),
            "p>": status.p_mean[:, 0],
            "p=": status.p_mean[:, 1],
            "p<": status.p_mean[:, 2],
        }
    )
    if state.settings.error_control == "anytime":
        frame["log e (A better)"] = status.log_evidence[:, 0]
        frame["log e (B better)"] = status.log_evidence[:, 1]
    if state.settings.error_control != "none":
        frame["stopped (futile)"] = status.futile
    table = state.table
    return frame[question_pairs(state.settings.question, table.systems, table.pair_systems)].reset_index(drop=True)


def _pair_words(state: ProtocolState) -> list[str]:
    words = decision_words(state.status.decision, state.status.equivalent)
    if not decides_tier_only(state):
        return words
    return [EQUIVALENT_WORDS if same else NOT_PAIRWISE_WORDS for same in state.status.equivalent]


def difference_label(state: ProtocolState) -> str:
    """The column of :func:`~prefeval_core.protocol.question_control.revealed_means`: the mean score
    difference, or the net win rate where the differences are outcomes (the outcome statistics;
    comparisons)."""
    outcomes = state.settings.statistic in OUTCOME_STATISTICS or state.table.grid is None
    return "net win rate A − B (revealed)" if outcomes else "mean difference A − B (revealed)"


CONTROL_WORDS = {name: rule.words for name, rule in ERROR_CONTROL_RULES.items()}
"""The error control in force, in words, for every caption that shows decisions."""


@dataclass(frozen=True)
class DecisionPaths:
    """What decided each pair, round by round, on the scale of the rule in force.

    Attributes:
        control: the error control (``settings.error_control``).
        y_title: what ``y`` is.
        lower, upper: the boundaries actually used: a point at or below ``lower`` decides ``<``
            (B better), at or above ``upper`` decides ``>`` (A better); ``None`` under
            ``question`` and ``fdr``, whose boundary moves with the other pairs or needs several
            processes at once (Holm, the partition of a margin, closed testing, e-BH).
        paths: pair index -> ``(round, y)`` after each round in which the pair was decided on.

    Per control: ``none``: ``y = θ = P(p> > p<)``, boundaries γ/2 and 1 − γ/2; ``anytime``:
    ``y`` = the larger side's log e-value, signed (+ for ``>``), boundaries ∓log(2/γ);
    ``spending``: ``y = (n> − n<) / b`` with ``b`` the group-sequential boundary at that look
    (decisive outcomes only), boundaries ∓1; ``question``: the signed log e-value of the pair's
    direction, no fixed boundary; ``fdr``: the same with the current (not running-maximum) e-values.
    """

    control: str
    y_title: str
    lower: float | None
    upper: float | None
    paths: dict[int, tuple[tuple[int, float], ...]]


def decision_paths(state: ProtocolState) -> DecisionPaths:
    """The :class:`DecisionPaths` of a run (recomputed from its records and reveals)."""
    settings = state.settings
    gamma, control = settings.gamma, settings.error_control
    points: dict[int, list[tuple[int, float]]] = {}
    if control == "spending":
        rounds, outcome = state.row_reveals
        table = state.table
        pool = table.row_requestable_for_pairs
        for record in state.records:
            looks, better = [], []
            for pair in record.pairs.tolist():
                rows = slice(table.pair_starts[pair], table.pair_starts[pair + 1])
                seen = np.where(rounds[rows] <= record.round, rounds[rows], 0)
                decisive = (outcome[rows] == BETTER) | (outcome[rows] == WORSE)
                size = int(pool[rows].sum())
                looks.append(
                    tuple(
                        (int(np.sum(decisive & (seen > 0) & (seen <= r))), int(np.sum((seen > 0) & (seen <= r))), size)
                        for r in np.unique(seen[seen > 0])
                    )
                )
                better.append(int(np.sum((outcome[rows] == BETTER) & (seen > 0))))
            found = spending_decisions(looks, better, gamma)
            for i, pair in enumerate(record.pairs.tolist()):
                if looks[i] and found.boundary[i] > 0:
                    difference = 2 * better[i] - looks[i][-1][0]
                    points.setdefault(pair, []).append((record.round, difference / float(found.boundary[i])))
        return DecisionPaths(control, "(n> − n<) / boundary of the look", -1.0, 1.0, _frozen(points))
    if control in ("anytime", "question", "fdr"):
        for record in state.records:
            for pair, (up, down) in zip(record.pairs.tolist(), record.log_evidence.tolist(), strict=True):
                points.setdefault(pair, []).append((record.round, up if up >= down else -down))
        if control in ("question", "fdr"):
            return DecisionPaths(control, "log e-value (+ A better, − B better)", None, None, _frozen(points))
        threshold = float(np.log(2.0 / gamma))
        return DecisionPaths(control, "log e-value (+ A better, − B better)", -threshold, threshold, _frozen(points))
    for record in state.records:
        for pair, theta in zip(record.pairs.tolist(), record.theta.tolist(), strict=True):
            points.setdefault(pair, []).append((record.round, theta))
    return DecisionPaths(control, "θ = P(p> > p<)", gamma / 2, 1 - gamma / 2, _frozen(points))


def _frozen(points: dict[int, list[tuple[int, float]]]) -> dict[int, tuple[tuple[int, float], ...]]:
    return {pair: tuple(path) for pair, path in sorted(points.items())}


def theta_history_figure(state: ProtocolState) -> go.Figure:
    """Each pair's path to its decision across rounds, on the scale of the error control in force,
    with the boundaries that rule actually used (:func:`decision_paths`); for a tier question under
    question-level control, which decides no pair, the tier's own path (:func:`exclusions_figure`)."""
    if decides_tier_only(state):
        return exclusions_figure(state)
    found = decision_paths(state)
    figure = go.Figure()
    colours = {BETTER: "#0072B2", TIE: "#999999", WORSE: "#D55E00"}
    for pair, points in found.paths.items():
        a, b = state.table.pairs[pair]
        figure.add_trace(
            go.Scatter(
                x=[r for r, _ in points], y=[y for _, y in points], mode="lines+markers", name=f"{a} vs {b}",
                line={"color": colours[int(state.decisions[pair])], "width": 1}, marker={"size": 4}, showlegend=False,
                hovertemplate=f"{a} vs {b}<br>round %{{x}}: %{{y:.3f}}<extra></extra>",
            )
        )  # fmt: skip
    lines = "dashed: the boundaries this rule decides at (beyond them: decided)"
    if found.lower is None or found.upper is None:
        lines = "no fixed line: a pair's boundary moves with the others' evidence (Holm, closed testing) or a margin's pieces"
    else:
        for level in (found.lower, found.upper):
            figure.add_hline(y=level, line_dash="dash", line_color="#555555")
    figure.update_layout(
        title={"text": f"Each pair's path to its decision; error control: {CONTROL_WORDS[found.control]}<br><sup>{lines}; "
               "blue A better, vermillion B better, grey undecided</sup>"},
        xaxis_title="round", yaxis_title=found.y_title, height=400, margin={"t": 80, "b": 40},
    )  # fmt: skip
    if found.control == "none":
        figure.update_yaxes(range=[-0.02, 1.02])
    return figure


def exclusions_figure(state: ProtocolState) -> go.Figure:
    """The systems still in a tier question's answer after each round, against the judgments used by
    then, each exclusion named (:func:`~prefeval_core.workflow.answers.exclusions`)."""
    cost = np.cumsum([0, *(record.cost for record in state.records)])
    inside = [len(state.table.systems), *(int(record.members.sum()) for record in state.records)]
    figure = go.Figure(
        go.Scatter(
            x=cost, y=inside, mode="lines+markers", line={"shape": "hv", "color": "#0072B2"}, name="systems in the answer",
            hovertemplate="%{x} judgments: %{y} systems in the answer<extra></extra>",
        )
    )  # fmt: skip
    by_round: dict[int, list[str]] = {}
    for exclusion in exclusions(state):
        by_round.setdefault(exclusion.round, []).append(exclusion.system)
    for number, names in by_round.items():
        figure.add_annotation(
            x=cost[number], y=inside[number], text=", ".join(names), showarrow=True, arrowhead=0, ax=30, ay=-20,
            font={"size": 10}, xanchor="left",
        )  # fmt: skip
    k = state.settings.question.tier_size
    figure.add_hline(y=k, line_dash="dash", line_color="#555555")
    best = "the best" if k == 1 else f"among the best {k}"
    figure.update_layout(
        title={"text": f"Systems that can still be {best}, round by round<br><sup>each step: the systems ruled out "
               f"(closed testing, the whole answer at once); dashed: k = {k}</sup>"},
        xaxis_title=f"{state.table.unit} used", yaxis_title="systems in the answer", height=400, margin={"t": 80, "b": 40},
        showlegend=False,
    )  # fmt: skip
    figure.update_yaxes(rangemode="tozero")
    return figure


PairCounts = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
"""One pair's count triple as hashable tuples: ``n`` (3), ``K`` (9, row-major: rows = metric), ``m`` (3)."""


def pair_counts(state: ProtocolState) -> tuple[PairCounts, ...]:
    """Every pair's counts of its first metric (hashable, for caches)."""
    counts = state.revealed_counts().triples(0)
    return tuple(
        (tuple(map(int, counts.n[i])), tuple(map(int, counts.K[i].ravel())), tuple(map(int, counts.m[i]))) for i in range(len(counts.n))
    )


def win_rates(
    counts: tuple[PairCounts, ...], model: Model, mu: tuple[tuple[float, ...], ...] | None, gamma: float, seed: int
) -> list[WinRateDensities]:
    """Each pair's posterior win-rate densities under the decision model, one per pair.

    Pairs the engine decides in closed form (no metric-only item, or ``model="human_only"``)
    get the exact ``Dirichlet(n + 1)`` densities; the others histograms of
    :data:`WIN_RATE_DRAWS` draws of :func:`~prefeval_core.decision.posterior_draws` (the fast
    sampler: the same posterior the decision uses, metric outcomes included).
    """
    densities = []
    for n, K, m in counts:
        if model == "human_only" or fast_route(sum(m), SamplerSettings()) == "closed_form":
            densities.append(win_rate_densities(alpha=np.asarray(n) + 1, seed=seed, draws=WIN_RATE_DRAWS, bins=80))
            continue
        mu_array = None if mu is None else np.asarray(mu)
        draws = posterior_draws(n, np.reshape(K, (3, 3)), m, model=model, mu=mu_array, gamma=gamma, draws=WIN_RATE_DRAWS, seed=seed)
        densities.append(win_rate_densities(samples=draws, bins=60))  # coarser than exact curves: 4000 draws
    return densities


def decisions_dag(
    pairs: tuple[tuple[str, str], ...],
    decisions: tuple[int, ...],
    reference: tuple[int, ...] | None,
    theta: tuple[float, ...],
    title: str,
    verdicts: tuple[str, ...] | None = None,
) -> tuple[go.Figure, tuple[tuple[str, ...], ...]]:
    """The DAG of a set of pair decisions (outcome codes; ``theta`` on the edges), its edges coloured
    by their ``verdicts`` against the full evaluation's ``reference`` when given (:func:`table_verdicts`:
    an open pair is no edge and no omission, and the legend counts it apart), and its cycles."""
    order = partial_order(
        pairs, np.asarray(decisions, dtype=np.int8), error_types=verdicts, reference=reference, theta=np.asarray(theta, dtype=np.float64)
    )
    open_pairs = 0 if verdicts is None else verdicts.count(OPEN)
    return dag_figure(order, title=title, open_pairs=open_pairs), order.cycles


def theta_words(state: ProtocolState) -> str:
    """What the pairs table's θ is, in one sentence, and whether it decides."""
    settings = state.settings
    if theta_source(settings) != "normal":
        what = "θ = P(p> > p<): the posterior chance that A is judged better than B more often than the reverse"
    else:
        pool = settings.statistic in POOL_STATISTICS
        of = "the mean over the study's items (s.e. corrected for the items left)" if pool else "the mean difference"
        what = f"θ ≈ P(Δ > 0): Φ(mean / s.e.) of the revealed differences, for {of}"
    if settings.error_control == "none":
        return f"{what}; the paper's rule decides from it."
    return f"{what}; each pair alone, uncorrected: the decisions come from the error control in force and do not read it."


def win_rates_caption(state: ProtocolState) -> str:
    """What the win-rate plots show, in plain words, and how they relate to the table's θ and to the
    decisions (:func:`~prefeval_core.protocol.error_controls.theta_source`)."""
    settings = state.settings
    source = theta_source(settings)
    decides = (
        ""
        if settings.error_control == "none"
        else f" The decisions are not read from θ but from the error control in force: {CONTROL_WORDS[settings.error_control]}."
    )
    # with several metrics the plots draw the first one's posterior only (pair_counts): the joint one is
    # too slow to draw for a figure on every round
    several = settings.model != "human_only" and state.table.k > 1
    if settings.model == "human_only":
        plots = "Exact posterior of each pair's outcome rates (p>, p=, p<) from its revealed human outcomes, Dirichlet(n + 1)."
    else:
        nuts = " (drawn with the fast sampler; θ used NUTS on the same model)" if settings.sampler == "nuts" else ""
        model = "the full model, μ uncertain" if settings.model == "full" else "the model with a known μ"
        metric = (
            f"the outcomes of the first metric, {state.table.metric_raters[0]}, on the other items (of the "
            f"{state.table.k} metrics, only the first is drawn here)"
            if several
            else "the metric's outcomes on the other items"
        )
        plots = (
            f"The posterior of each pair's outcome rates under {model}: human outcomes revealed so far and {metric}. "
            f"Histograms of {WIN_RATE_DRAWS:,} draws per pair{nuts}; pairs without metric-only items are exact Dirichlet(n + 1)."
        )
    if source == "normal":
        pool = " (Δ: the mean over the study's items; s.e. corrected for the items left)" if settings.statistic in POOL_STATISTICS else ""
        table = (
            f" The {settings.statistic} statistic tests score differences, not these rates: the table's θ is Φ(mean / s.e.), "
            f"the normal approximation of P(Δ > 0) from the pair's revealed differences{pool}."
        )
    elif source == "human_only" and settings.model != "human_only":
        table = " The table's θ is the exact human-only posterior, I_{1/2}(n< + 1, n> + 1): the metric does not enter it."
    elif settings.model == "human_only":
        table = " The table's θ comes from these posteriors."
    elif several:
        table = (
            f" The table's θ uses all {state.table.k} metrics at once, so it can differ from the share of draws with p> > p< "
            "in these plots by more than Monte-Carlo error."
        )
    else:
        table = " θ in these plots is the share of draws with p> > p<, so it differs from the table's θ by Monte-Carlo error (about ±0.01)."
    units = (
        " Each (item, annotator) rating counts as one outcome here; the ratings of one item are dependent, so these curves "
        "and θ are narrower than the evidence. The decisions come from the pool test, whose guarantee holds on such units."
        if state.table.annotator_units
        else ""
    )
    return plots + table + units + decides


def cost_sentence(state: ProtocolState, result: ProtocolResult | None = None) -> str:
    """What the run has cost, in the study's unit (and, in a replay, against the full evaluation)."""
    unit = UNIT_WORDS[state.table.unit]
    text = f"{state.cost_used:,} of a budget of {state.settings.budget:,} {unit} used"
    if result is not None:
        text += (
            f"; {result.cost_fraction:.1%} of the {result.cost_available:,} {unit} of the full evaluation "
            f"({result.annotation_fraction:.1%} of its human pair outcomes)"
        )
    return text + "."


def baselines_caption(state: ProtocolState, result: ProtocolResult) -> str:
    """What the Baselines tab's table holds (:func:`~prefeval_core.workflow.baselines.baselines_frame`):
    the judgments behind it, the reference, how open pairs and a tier question are counted."""
    revealed = f"Every method decides from the same {int(result.human_used.sum()):,} human pair outcomes this run revealed. "
    if result.top_k is not None:
        counted = (
            f"A tier question is scored by its tier, as its answer is: each method's top-{result.top_k.answer.k} tier is the "
            "question's rule applied once to its decisions, against the full human evaluation's tier (the serious error: a "
            "member left out). "
        )
        cost = "members left out and extras count what that costs here"
    else:
        counted = (
            "The counts are the question's pairs per verdict against the full human evaluation, the reference every view of "
            "this run uses; open: pairs the run has not decided while it goes on (no error yet), counted apart — the other "
            "methods look once, so what they leave undecided is final. "
        )
        cost = "inversions and insertions count what that costs here"
    return (
        revealed
        + counted
        + "PPI++, the classical interval and Bradley–Terry look once at everything revealed, with no sequential error control and "
        "no question to stop at: they can decide more pairs than a run that stops asking about pairs that can no longer "
        f"change its answer, with no guarantee over repeated looks or the whole answer ({cost}). Cost of this run: "
        f"{cost_sentence(state, result)}"
    )


def protocol_section(state: ProtocolState, result: ProtocolResult | None = None) -> ReportSection:
    """The protocol's section of the HTML report: status, cost, answer, the pairs, theta across rounds."""
    table = pairs_frame(state).to_html(index=False, escape=True, float_format=lambda v: f"{v:.3f}", na_rep="")
    status = study_status(state)
    settings = state.settings
    text = (
        f"Question: {first_upper(settings.question.describe())}. {status.answer} Round {status.round}; {cost_sentence(state, result)} "
        f"{status.progress_words}; {status.stop_words}. Settings: model {settings.model}, "
        f"error control {settings.error_control}, gamma {settings.gamma}, batch {settings.batch}, seed {settings.seed}."
    )
    return ReportSection("Protocol", text, (theta_history_figure(state),), html_body=table)


def contributions_frame(state: ProtocolState, pair: int) -> pd.DataFrame:
    """What each metric contributes to one pair's θ (several metrics, full model): θ and the
    decision with all metrics, without each one, with each alone, and with human judgments only."""
    counts = state.revealed_counts().subset(np.array([pair]))
    found = metric_contributions(counts, gamma=state.settings.gamma, seed=state.settings.seed)
    rows = [("all metrics", found.theta_all[0]), ("human judgments only", found.theta_human[0])]
    rows += [(f"without {name}", found.theta_without[0, j]) for j, name in enumerate(found.metrics)]
    rows += [(f"{name} alone", found.theta_alone[0, j]) for j, name in enumerate(found.metrics)]
    thetas = np.array([theta for _, theta in rows])
    return pd.DataFrame(
        {
            "evidence": [label for label, _ in rows],
            "θ = P(p> > p<)": thetas,
            "decision": [DECISION_WORDS[int(c)] for c in found.decision(thetas)],
        }
    )


def table_csv(frame: pd.DataFrame) -> bytes:
    """A results table as a CSV download a spreadsheet opens safely (formula-like text cells neutralised)."""
    return to_safe_csv(frame)
