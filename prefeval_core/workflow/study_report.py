"""The report a lead sends: the answer first, then the leaderboard, the judges, the settings, and
the diagnostics after — in plain HTML tables (no script), so a 16-system study stays far under
1 MB. Interactive plotly figures are an optional appendix (they bring the plotly.js bundle,
about 4.6 MB, inlined once).

Also here: :func:`judge_bought`, what the judge (the study's metrics) saved against the same run
with human judgments only.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from prefeval_core.diagnostics.comparison import ERROR_COLOURS, ERROR_LABELS, OPEN
from prefeval_core.diagnostics.leaderboard import Leaderboard
from prefeval_core.diagnostics.metric_report import MetricReport
from prefeval_core.figures.report import ReportSection, diagnostics_sections, html_report
from prefeval_core.protocol import (
    ProtocolResult,
    ProtocolState,
    QuestionKind,
    is_finished,
    new_state,
    protocol_result,
    replay_source,
    run_protocol,
)
from prefeval_core.protocol.settings import CLT_STATISTICS
from prefeval_core.vocabulary.outcomes import BETTER, TIE
from prefeval_core.vocabulary.words import first_upper
from prefeval_core.workflow.answers import answer_words, exclusion_words, exclusions_frame, status_words, study_leaderboard
from prefeval_core.workflow.judges import JudgeComparison, judges_frame
from prefeval_core.workflow.setup import PER_REQUEST_WORDS, STATISTIC_WORDS, StudySetup
from prefeval_core.workflow.status import judge_role, judge_words, study_status
from prefeval_core.workflow.views import (
    CONTROL_WORDS,
    NOT_PAIRWISE_WORDS,
    cost_sentence,
    decides_tier_only,
    pairs_frame,
    theta_history_figure,
    theta_words,
)


@dataclass(frozen=True)
class JudgeBought:
    """What the study's judge(s) bought: the run against the same run with human judgments only
    (same table, settings and seed, as many rounds).

    Attributes:
        judges: the metrics of the study.
        unit: what one judgment is.
        cost_with, cost_without: judgments the run used with the judge / human only.
        decided_with, decided_without: pairs of the question decided.
        why: the reason in words, from the error control in force.
        ruled_out_with, ruled_out_without: a tier question's systems ruled out (``None`` otherwise).
    """

    judges: tuple[str, ...]
    unit: str
    cost_with: int
    cost_without: int
    decided_with: int
    decided_without: int
    why: str
    ruled_out_with: int | None = None
    ruled_out_without: int | None = None

    def words(self) -> str:
        saved = self.cost_without - self.cost_with
        verb = "saved" if saved >= 0 else "cost"
        if self.ruled_out_with is None or self.ruled_out_without is None:
            settled = f"decided {_more(self.decided_with - self.decided_without, 'pair')}"
        else:
            settled = f"ruled out {_more(self.ruled_out_with - self.ruled_out_without, 'system')}"
        return (
            f"The judge ({', '.join(self.judges)}) {verb} {abs(saved):,} {self.unit} ({self.cost_with:,} with it, "
            f"{self.cost_without:,} with human judgments only) and {settled}: {self.why}"
        )


def _more(difference: int, noun: str) -> str:
    """``3 more pairs``, ``1 fewer system``."""
    return f"{abs(difference)} {'more' if difference >= 0 else 'fewer'} {noun}{'' if abs(difference) == 1 else 's'}"


def judge_bought(state: ProtocolState) -> JudgeBought | None:
    """:class:`JudgeBought` of a replay run (``None`` without a metric in the decision model).

    Runs the protocol again with ``model="human_only"`` on the replay source: to its end if this run
    has ended (a judge that ends the run sooner saves what the human-only run goes on to buy), else for
    as many rounds: seconds for the bundled studies."""
    settings = state.settings
    why = judge_role(settings)
    if not state.table.k or why is None:
        return None
    rounds = None if is_finished(state) else state.round
    human = run_protocol(new_state(state.table, replace(settings, model="human_only")), replay_source(state.table), max_rounds=rounds)
    now, then = study_status(state), study_status(human)
    return JudgeBought(
        state.table.metric_raters, state.table.unit, state.cost_used, human.cost_used, now.decided, then.decided, why,
        now.ruled_out, then.ruled_out,
    )  # fmt: skip


_COLOURS: dict[str, str] = {str(k): v for k, v in ERROR_COLOURS.items()}
_LABELS: dict[str, str] = {str(k): v for k, v in ERROR_LABELS.items()}
_CSS = """
dl.summary { display: grid; grid-template-columns: max-content auto; gap: 0.4em 1.2em; }
dl.summary dt { font-weight: 600; } dl.summary dd { margin: 0; }
.bar { position: relative; height: 0.8em; width: 14em; background: #eee; }
.bar span { position: absolute; top: 0; height: 100%; background: #0072B2; opacity: 0.55; }
.bar i { position: absolute; top: -0.15em; width: 2px; height: 1.1em; background: #000; }
table.matrix td { width: 1.6em; height: 1.6em; padding: 0; text-align: center; font-size: 0.8em; }
table.matrix th { font-size: 0.8em; padding: 0.1em 0.3em; }
"""


def _table(frame: pd.DataFrame, digits: int = 3) -> str:
    return frame.to_html(index=False, escape=True, float_format=lambda v: f"{v:.{digits}f}", na_rep="–", border=0)


def summary_section(state: ProtocolState, result: ProtocolResult | None, bought: JudgeBought | None) -> ReportSection:
    """Question, answer in names, why it stopped, cost, what the judge bought, error control, (replay) agreement."""
    settings = state.settings
    status = study_status(state)
    control = CONTROL_WORDS[settings.error_control] + f", γ = {settings.gamma:g}"
    if settings.statistic in CLT_STATISTICS:
        control += f" (asymptotically: the {settings.statistic} statistic's guarantee rests on the central limit theorem)"
    if settings.futility is not None:
        control += f"; futility stop at β = {settings.futility:g}"
    rows = [
        ("Question", first_upper(settings.question.describe()) + "."),
        ("Answer", answer_words(state)),
        ("Status", f"round {status.round}; " + (f"finished: {status.stop_words}." if status.finished else "running.")),
        ("Cost", cost_sentence(state, result)),
        ("What the judge bought", judge_words(settings) if bought is None else bought.words()),  # as the Protocol page says it
        ("Error control", control + "."),
    ]
    if result is not None:
        scored, tally = result.scored, result.tally()  # the verdicts every view counts
        correct = tally["correct_significant"] + tally["correct_undecided"]
        inversions = tally["inversion"]
        still_open = f"; {tally[OPEN]} open (not decided yet: no error yet)" if tally[OPEN] else ""
        text = (
            f"{correct} of {int(scored.sum())} scored pairs agree with the full human evaluation; "
            f"{inversions} {'inversion' if inversions == 1 else 'inversions'}{still_open}."
        )
        if result.answer is not None:  # a tier question is judged by its tier first; pairs it never decided are no verdict
            decided = int(np.sum(result.outcomes[scored] != TIE))
            pairs = f" Of its scored pairs, {decided} were decided; {inversions} {'inversion' if inversions == 1 else 'inversions'}."
            text = result.answer.words() + ("" if decides_tier_only(state) else pairs)  # closed testing decides no pair
        rows.append(("Against the full human evaluation", text))
    body = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in rows)
    return ReportSection("Summary", html_body=f'<dl class="summary">{body}</dl>')


def leaderboard_section(board: Leaderboard, question_kind: QuestionKind) -> ReportSection:
    """The leaderboard as a table, each interval drawn as a bar on a common scale."""
    finite = np.concatenate([board.low[~np.isnan(board.low)], board.high[~np.isnan(board.high)]])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    span = (hi - lo) or 1.0

    def bar(i: int) -> str:
        if math.isnan(board.low[i]):  # no interval (fewer than two items judged): no bar
            return ""
        left, right, mid = ((v - lo) / span * 100 for v in (board.low[i], board.high[i], board.score[i]))
        return f'<div class="bar"><span style="left:{left:.1f}%;width:{right - left:.1f}%"></span><i style="left:{mid:.1f}%"></i></div>'

    score = "mean human score" if board.kind == "mean score" else "win rate"
    head = ["system", score, "95% interval", "", f"P(top {board.k})", "status", "judgments"]
    rows = []
    for i, system in enumerate(board.systems):
        cells = [
            html.escape(system),
            "–" if math.isnan(board.score[i]) else f"{board.score[i]:.3f}",
            "–" if math.isnan(board.low[i]) else f"{board.low[i]:.3f} – {board.high[i]:.3f}",
            bar(i),
            "–" if math.isnan(board.p_top[i]) else f"{board.p_top[i]:.2f}",
            html.escape(board.status[i]),
            f"{board.spent[i]:,}",
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    table = "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>" + "".join(rows) + "</table>"
    return ReportSection("Leaderboard", board.method() + " " + status_words(question_kind), html_body=table)


def judges_section(comparison: JudgeComparison) -> ReportSection:
    """The judges side by side with their verdicts and the rule behind them."""
    text = (
        f"Against {comparison.human} on the {len(comparison.systems)} systems every rater scored, at the top-{comparison.k} boundary "
        "(the question's tier size; the Metric check page's judges may be set to another k, and their verdicts read at it). "
        "System accuracy: share of pairs of systems that the judge's mean scores order as the reference's do. "
        + comparison.reference_note()
        + " Verdict — "
        + comparison.rule
    )
    return ReportSection("Judges: a verdict on each", text, html_body=_table(judges_frame(comparison)))


def settings_section(state: ProtocolState, design_note: str | None = None) -> ReportSection:
    """Every setting, in words; ``design_note``: why a request bought every rating of an output at
    once where the defaults would buy one at a time (:func:`~prefeval_core.workflow.study.request_design_note`)."""
    s = state.settings
    table = state.table
    rows = [
        ("human rater", table.human_rater),
        ("judges in the decision model", ", ".join(table.metric_raters) or "none (human only)"),
        ("a paid judgment is", "a rating of one output" if table.unit == "ratings" else "a comparison of two outputs"),
        ("budget", f"{s.budget:,} {table.unit}"),
        ("batch per round", f"{s.batch} items per {'system' if table.unit == 'ratings' else 'pair'}"),
        ("decision model", {"full": "judge + human (full model)", "human_only": "human only"}.get(s.model, s.model)),
        ("error control", CONTROL_WORDS[s.error_control]),
        ("statistic", STATISTIC_WORDS[s.statistic]),
        ("equivalence margin δ", "none" if s.delta is None else f"{s.delta:g} (human score units)"),
        ("significance level γ", f"{s.gamma:g}"),
        ("futility stop", "off" if s.futility is None else f"β = {s.futility:g}"),
        ("seed", str(s.seed)),
        ("systems / items", f"{len(table.systems)} / {len(table.items)}" + (" (item, annotator) units" if table.annotator_units else "")),
    ]
    if table.ratings_per_request != "all":  # several annotators per output kept apart, bought one at a time
        rows.insert(3, ("a request buys", PER_REQUEST_WORDS[table.ratings_per_request]))
    if design_note is not None:
        rows.insert(3, ("a request bought", design_note.removeprefix("a request bought ")))
    frame = pd.DataFrame(rows, columns=["setting", "value"])
    return ReportSection("Settings", html_body=_table(frame))


def decisions_matrix_section(state: ProtocolState, result: ProtocolResult | None, board: Leaderboard) -> ReportSection:
    """The decisions as a coloured matrix (row significantly better than column), systems in
    leaderboard order; in a replay coloured by error type against the full human evaluation. With a
    margin δ, a pair shown equivalent is marked ≈ in both of its cells ("false" where the full
    evaluation puts it δ or more apart)."""
    table = state.table
    order = list(board.systems)
    index = {s: i for i, s in enumerate(order)}
    n = len(order)
    colours: dict[tuple[int, int], str] = {}
    titles: dict[tuple[int, int], list[str]] = {}
    marks: dict[tuple[int, int], str] = {}
    types, false_equal = {}, set()
    if result is not None:
        types = {pair: str(t) for pair, t in zip(result.pairs, result.verdicts, strict=True)}  # "": a pair not scored
        false_equal = {pair for pair, wrong in zip(result.pairs, result.false_equivalent, strict=True) if wrong}
    for (a, b), decision, same in zip(table.pairs, state.decisions.tolist(), state.status.equivalent.tolist(), strict=True):
        if decision != TIE:
            winner, loser = (a, b) if decision == BETTER else (b, a)
            kind = types.get((a, b), "correct_significant" if result is None else "")
            colours[index[winner], index[loser]] = _COLOURS.get(kind, "#555555")
            titles.setdefault((index[winner], index[loser]), []).append(f"{winner} > {loser}: {_LABELS.get(kind, 'decided')}")
        if same:
            words = "false equivalence (δ or more apart on the full evaluation)" if (a, b) in false_equal else "equivalent within δ"
            for both in ((index[a], index[b]), (index[b], index[a])):
                marks[both] = "≈?" if (a, b) in false_equal else "≈"
                titles.setdefault(both, []).append(f"{a} ≈ {b}: {words}")

    def cell(i: int, j: int) -> str:
        if (i, j) not in titles:
            return "<td></td>"
        style = f' style="background:{colours[i, j]}"' if (i, j) in colours else ""
        return f'<td{style} title="{html.escape("; ".join(titles[i, j]))}">{marks.get((i, j), "")}</td>'

    head = "<tr><th></th>" + "".join(f"<th>{html.escape(s)}</th>" for s in order) + "</tr>"
    body = "".join(f"<tr><th>{html.escape(s)}</th>" + "".join(cell(i, j) for j in range(n)) + "</tr>" for i, s in enumerate(order))
    shown = set(types.values())
    legend = ", ".join(
        f'<span style="color:{_COLOURS[k]}">■</span> {html.escape(_LABELS[k])}'
        for k in ("correct_significant", "inversion", "insertion")
        if k in shown
    )
    if marks:
        legend += ("; " if legend else "") + "≈ equivalent within the margin δ" + (", ≈? a false equivalence" if false_equal else "")
    text = "A filled cell: the row's system is significantly better than the column's (empty: not decided). Systems in leaderboard order."
    return ReportSection("Decisions", text, html_body=f'<table class="matrix">{head}{body}</table><p class="note">{legend}</p>')


def exclusions_section(state: ProtocolState) -> ReportSection:
    """A tier question's systems ruled out, in order (:func:`~prefeval_core.workflow.answers.exclusions`)."""
    frame = exclusions_frame(state)
    return ReportSection("Ruled out", exclusion_words(state), html_body=_table(frame) if len(frame) else "")


def pairs_section(state: ProtocolState) -> ReportSection:
    """The question's pairs only, decided first, in words."""
    frame = pairs_frame(state).sort_values("decision", key=lambda c: c.isin(["undecided", NOT_PAIRWISE_WORDS]), kind="stable")
    if "stopped (futile)" in frame:
        frame["stopped (futile)"] = frame["stopped (futile)"].map({True: "yes", False: ""})
    body = f"<details><summary>Show the {len(frame)} pairs</summary>{_table(frame)}</details>"
    text = f"{len(frame)} pairs; decided first; folded (open it to read). {theta_words(state)}"
    return ReportSection("Pairs of the question", text, html_body=body)


def metric_section(report: MetricReport) -> ReportSection:
    """The metric check in a few numbers (no raw lists)."""

    def number(value: float | None) -> str:
        return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"

    kendall = report.kendall
    rows = [
        ("pairs of systems", f"{len(report.pairs)}"),
        ("item comparisons (pairs × items both rated)", f"{report.sign.items:,}"),
        ("sample-level sign accuracy (items)", number(report.sign.sample)),
        ("system-level sign accuracy (item wins per pair)", number(report.sign.system)),
        ("mean |Favi-Score| ± sd", f"{number(report.mean_abs_favi)} ± {number(report.std_abs_favi)}"),
        ("Kendall tau-b of the scores", "n/a (pairwise rater)" if kendall is None else number(kendall.tau)),
    ]
    frame = pd.DataFrame(rows, columns=["figure", "value"])
    return ReportSection(f"Metric check: {report.metric} against {report.human}", html_body=_table(frame))


def study_report_html(
    title: str,
    state: ProtocolState,
    result: ProtocolResult | None,
    *,
    judges: JudgeComparison | None = None,
    metric: MetricReport | None = None,
    bought: JudgeBought | None = None,
    appendix: Sequence[ReportSection] = (),
    design_note: str | None = None,
) -> str:
    """The whole report (module docstring): summary, leaderboard, judges, settings (with
    ``design_note``, :func:`settings_section`); then the decisions matrix, the question's pairs, the
    metric check and any ``appendix`` (figures)."""
    board = study_leaderboard(state)
    sections = [summary_section(state, result, bought), leaderboard_section(board, state.settings.question.kind)]
    if judges is not None:
        sections.append(judges_section(judges))
    sections.append(settings_section(state, design_note))
    if state.settings.question.entry.tier:
        sections.append(exclusions_section(state))
    if not decides_tier_only(state) or state.status.equivalent.any():  # closed testing over a tier decides no pair
        sections.append(decisions_matrix_section(state, result, board))
    sections.append(pairs_section(state))
    if metric is not None:
        sections.append(metric_section(metric))
    return html_report(title, [*sections, *appendix], style=_CSS)


def session_report_html(
    title: str,
    state: ProtocolState | None,
    setup: StudySetup | None,
    *,
    metric: MetricReport | None = None,
    judges: JudgeComparison | None = None,
    figures: bool = False,
    seed: int = 0,
    design_note: str | None = None,
) -> str:
    """The offline HTML report of a dashboard session. With a protocol ``state``, the study
    report (:func:`study_report_html`; in a replay also against the full evaluation, and what the
    judge saved; ``design_note`` in its settings); without one, the metric check and the judges.
    ``figures``: append the metric's interactive figures (its posteriors drawn with ``seed``) and
    the decisions across rounds."""
    appendix = diagnostics_sections(metric, confusions_shown=3, seed=seed) if figures and metric is not None else []
    if state is None:
        sections = [*([] if metric is None else [metric_section(metric)]), *([] if judges is None else [judges_section(judges)])]
        return html_report(title, [*sections, *appendix])
    replay = setup is None or setup.mode == "replay"
    result = protocol_result(state) if replay else None
    if figures:
        appendix.append(ReportSection("Decisions across rounds", figures=(theta_history_figure(state),)))
    bought = judge_bought(state) if replay else None
    return study_report_html(title, state, result, judges=judges, metric=metric, bought=bought, appendix=appendix, design_note=design_note)
