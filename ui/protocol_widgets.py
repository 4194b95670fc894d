"""Widgets of the Protocol page: the study settings, the step buttons, and what the rounds show.

Everything computed comes from the application layer (:mod:`prefeval_core.workflow`): the
widgets only collect a :class:`~prefeval_core.workflow.StudySetup` and show results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from prefeval_core.figures.posterior import win_rate_figure
from prefeval_core.vocabulary.outcomes import UNDECIDED
from prefeval_core.vocabulary.words import first_upper
from prefeval_core.workflow import StudySetup, views
from prefeval_core.workflow.answers import exclusion_words, exclusions_frame, leaderboard_frame, status_words, study_leaderboard
from prefeval_core.workflow.replay_steps import is_finished, next_round, run_to_end, start_recorded, undo_last
from prefeval_core.workflow.replay_steps import replay_result as compare_with_reference
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.setup import FUTILITY_OFF_WORDS, SetupField, futility_in_force, setup_fields, setup_from_values, setup_values
from prefeval_core.workflow.status import judge_role, judge_words
from ui import cache, state, studies
from ui.errors import escape_markdown, user_errors
from ui.live_round import decide_button, fresh_judgments

if TYPE_CHECKING:
    from prefeval_core.data.dataset import Dataset
    from prefeval_core.protocol import ProtocolResult, ProtocolState

UNSET = "auto"
"""The choice that leaves an optional choice unset (the cost unit: as the human rater)."""
FORM_MODELS = ("full", "human_only")
"""The decision models the form offers (``known_mu`` comes with the ideal metric)."""


def current_setup(human: str, metrics: tuple[str, ...]) -> StudySetup:
    """The setup of the last started protocol on these raters, else the defaults (replay of every
    judgment, the paper's batch of 10, all pairs)."""
    setup = state.setup()
    if setup is None or setup.human != human or setup.metrics != metrics:
        return StudySetup(human=human, metrics=metrics)
    return setup


def form_values(choice: DataChoice, setup: StudySetup) -> dict[str, Any]:
    """The form's values for ``setup``: its own, except a live study's budget that the app chose (no
    budget given, :func:`live_setup`), which shows as unset, so that it is chosen again and never
    carried into a replay as if the lead had asked for it."""
    values = setup_values(setup)
    if setup.mode == "live" and setup.budget == live_setup(choice, setup.with_(mode="replay", budget=None)).budget:
        values["budget"] = None
    return values


def choice_words(field: SetupField) -> dict[str, str]:
    """The choices the form offers for a declared setting, with their words (:data:`UNSET` first for an optional one)."""
    words = field.setting.words()
    return {UNSET: field.setting.none, **words} if field.optional else words


def pick(column: DeltaGenerator, field: SetupField, current: Any, labels: Mapping[str, str] | None = None) -> Any:
    """A select box over a declared setting's choices (or ``labels``), shown in words, starting at ``current``."""
    labels = choice_words(field) if labels is None else labels
    keys = list(labels)
    current = UNSET if current is None and field.optional else current
    chosen = column.selectbox(
        field.setting.label, keys, index=keys.index(current) if current in keys else 0, format_func=labels.__getitem__,
        help=field.setting.help,
    )  # fmt: skip
    return None if chosen == UNSET else chosen


def number(column: DeltaGenerator, field: SetupField, value: float, *, high: float | None = None, **options: Any) -> Any:
    """A number input of a declared setting over the range the declaration shows (``high``: a
    narrower top, e.g. the number of systems); an unset optional value shows as 0."""
    low, top = field.setting.shown or (field.setting.bounds.low, field.setting.bounds.high)
    top = top if high is None else high
    assert low is not None and top is not None, f"{field.name}: the form shows bounded numbers only"
    kind = field.kind
    return column.number_input(
        field.setting.label, kind(low), kind(top), kind(min(max(value, low), top)), help=field.setting.help, **options
    )


def settings_form(choice: DataChoice, dataset: Dataset, human: str, metrics: tuple[str, ...]) -> None:
    """The study settings in a form, each widget made from the setting's declaration
    (:func:`~prefeval_core.workflow.setup.setup_fields`); nothing runs until *Start*, which creates a fresh protocol."""
    values = form_values(choice, current_setup(human, metrics))
    f = setup_fields()
    systems = sorted(set(dataset.systems))
    chosen: dict[str, Any] = {}
    with st.form("pe.w.settings"):
        c = list(st.columns([2, 2, 1, 2]))
        modes = f["mode"].setting.words()
        mode = c[0].radio(f["mode"].setting.label, list(modes), index=list(modes).index(values["mode"]), format_func=modes.__getitem__)
        chosen["kind"] = pick(c[1], f["kind"], values["kind"])
        chosen["k"] = int(number(c[2], f["k"], values["k"], high=max(1, len(systems) - 1)))
        chosen["baselines"] = tuple(
            c[3].multiselect(f["baselines"].setting.label, systems, default=[b for b in values["baselines"] if b in systems])
        )
        c = list(st.columns(4))
        chosen["unit"] = pick(c[0], f["unit"], values["unit"])
        chosen["budget"] = int(number(c[1], f["budget"], values["budget"] or 0)) or None
        chosen["batch"] = int(number(c[2], f["batch"], values["batch"]))
        chosen["seed"] = int(number(c[3], f["seed"], values["seed"]))
        c = list(st.columns(4))
        chosen["error_control"] = pick(c[0], f["error_control"], values["error_control"])
        chosen["gamma"] = float(number(c[1], f["gamma"], values["gamma"], step=0.01, format="%.3f"))
        # the toggle shows what the run of these settings does: off under the paper's rule, which has no
        # futility stop; the level chosen is kept for the other rules (it comes back when the rule changes)
        paper = futility_in_force(values["error_control"], values["futility"]) is None and values["futility"] is not None
        futility_on = c[2].toggle(
            "Futility stop", value=values["futility"] is not None and not paper, help=f["futility"].setting.help, disabled=paper
        )
        if paper:
            c[2].caption(first_upper(FUTILITY_OFF_WORDS) + ".")
        beta = number(c[3], f["futility"], values["futility"] or f["futility"].default, step=0.01, format="%.3f")
        chosen["futility"] = float(beta) if futility_on or paper else None
        c = list(st.columns(4))
        models = {key: word for key, word in f["model"].setting.words().items() if key in (FORM_MODELS if metrics else ("human_only",))}
        chosen["model"] = pick(c[0], f["model"], current_setup(human, metrics).decision_model, models)
        chosen["sampler"] = pick(c[1], f["sampler"], values["sampler"])
        chosen["policy"] = pick(c[2], f["policy"], values["policy"])
        chosen["eps_metric"] = float(number(c[3], f["eps_metric"], values["eps_metric"], format="%.4f"))
        c = list(st.columns(4))
        chosen["statistic"] = pick(c[0], f["statistic"], values["statistic"])
        chosen["delta"] = float(number(c[1], f["delta"], values["delta"] or 0.0, format="%.3f")) or None
        chosen["ratings_per_request"] = pick(c[2], f["ratings_per_request"], values["ratings_per_request"])
        chosen["judgments_per_item"] = int(number(c[3], f["judgments_per_item"], values["judgments_per_item"]))
        share = f["human_fraction"].setting
        low, high = share.shown or (0.05, 1.0)
        chosen["human_fraction"] = float(st.slider(share.label, low, high, values["human_fraction"], step=0.05, help=share.help))
        if st.form_submit_button("Start protocol", type="primary"):
            with user_errors("Starting the protocol"):
                setup = setup_from_values({**values, **chosen, "mode": "replay"})
                if mode == "live":
                    setup = live_setup(choice, setup)
                start(choice, setup)
            st.rerun()  # the form then shows what the run does (e.g. no futility stop under the paper's rule)


def live_setup(choice: DataChoice, setup: StudySetup) -> StudySetup:
    """``setup`` as a live study; without a budget it gets a quarter of the judgments its outputs allow."""
    budget = setup.budget
    if budget is None:
        budget = max(1, cache.study_table(choice, setup.with_(mode="live", budget=1)).cost_available() // 4)
    return setup.with_(mode="live", budget=budget)


def start(choice: DataChoice, setup: StudySetup) -> None:
    """A fresh protocol for ``setup``, recorded as a new study in the store."""
    studies.adopt(start_recorded(choice, cache.dataset(choice), setup))


def step_buttons(choice: DataChoice, protocol: ProtocolState) -> None:
    """*Next batch*, *Run to the end* (replay), *Undo last step* (the last button pressed: a round, or
    the whole *Run to the end*); the new state goes to the session."""
    setup = state.setup()
    replay = setup is None or setup.mode == "replay"
    finished = is_finished(protocol)
    c = st.columns(3)
    if replay and c[0].button("Next batch", key="pe_next", type="primary", disabled=finished, width="stretch"):
        with user_errors("The protocol round"), st.spinner("Deciding ..."):
            studies.commit(next_round(protocol))
        st.rerun()
    if not replay:
        with c[0]:
            decide_button(choice, protocol)  # part-way it asks first and keeps the open requests queued
        if not fresh_judgments(choice, protocol):
            st.caption(
                "Live mode: annotate the requested items on the Annotate page (or upload annotated request files there), then decide."
            )
    if c[1].button("Run to the end", key="pe_run", disabled=finished or not replay, width="stretch"):
        bar = st.progress(0.0, text="Starting ...")

        def progress(s: ProtocolState) -> None:
            bar.progress(min(1.0, s.cost_used / max(1, s.settings.budget)), text=f"Round {s.round}: {views.cost_sentence(s)}")

        with user_errors("Running the protocol"):
            studies.commit(run_to_end(protocol, progress=progress))
        st.rerun()
    undo_help = "back to where the run stood before the last Next batch or Run to the end"
    disabled = protocol.round == 0 and not protocol.open_reveals
    if c[2].button("Undo last step", key="pe_undo", help=undo_help, disabled=disabled, width="stretch"):
        undo(protocol)
        st.rerun()


def undo(protocol: ProtocolState) -> None:
    """Undo the last round: the study's trail goes back one state (and keeps the undone one)."""
    record = st.session_state[state.STUDY]
    st.session_state[state.PROTOCOL] = undo_last(protocol, None if record is None else record.id)


def status(protocol: ProtocolState) -> None:
    """The run at a glance: the answer in names first, then round, cost in the study's unit, decided pairs."""
    now = views.study_status(protocol)
    question = first_upper(protocol.settings.question.describe())
    st.info(f"**Question:** {escape_markdown(question)}  \n**Answer:** {escape_markdown(now.answer)}")
    c = st.columns(4)
    c[0].metric("Round", now.round)
    c[1].metric(f"{now.unit.capitalize()} used", f"{now.cost_used:,}", help=f"of a budget of {now.budget:,} {now.unit}")
    if now.ruled_out is None:
        if now.equivalent is None:
            c[2].metric("Decided pairs", f"{now.decided} / {now.pairs}", help="pairs of the question with a significant winner")
        else:
            c[2].metric(
                "Decided pairs", f"{now.pairs - now.undecided} / {now.pairs}",
                help=f"pairs with a significant winner ({now.decided}) or shown equivalent within the margin ({now.equivalent})",
            )  # fmt: skip
    else:
        c[2].metric(
            "Systems ruled out", f"{now.ruled_out} / {now.systems}",
            help=f"systems shown not to be among the best {protocol.settings.question.k}; {now.decided} of {now.pairs} pairs decided",
        )  # fmt: skip
    c[3].metric("Pairs that still matter", now.matter, help="undecided pairs whose judgments can still change the answer")
    if now.finished:
        st.caption(f"The protocol has finished: {now.stop_words}.")
    setup = state.setup()
    if now.finished and (setup is None or setup.mode == "replay"):
        with user_errors("Measuring what the judge bought", stop=False):
            bought = cache.judge_bought(protocol)
            st.caption(escape_markdown(judge_words(protocol.settings) if bought is None else bought.words()))
    elif judge_role(protocol.settings) is not None:  # before the end, and in a live study: what the judge can do
        st.caption(escape_markdown(judge_words(protocol.settings)))


def design_note(choice: DataChoice) -> None:
    """Why the study buys every rating of an output at once where the defaults would buy one at a
    time (outputs rated unequally often), as ``prefeval replay`` says it."""
    setup = state.setup()
    note = None if setup is None else cache.design_note(choice, setup)
    if note is not None:
        st.caption(escape_markdown(first_upper(note)) + ".")


def leaderboard(protocol: ProtocolState) -> None:
    """Each system's score on the judgments revealed, its interval, P(top k), status and judgments spent."""
    board = study_leaderboard(protocol)
    if not board.spent.any():  # no score, interval or chance of being best to show: not a table of blanks and zeros
        st.info("No judgment is revealed yet: the leaderboard fills in after the first round.")
        return
    frame = leaderboard_frame(board)
    chance = f"P(top {board.k})"
    numbers = [name for name in frame.select_dtypes("float").columns if name != chance]
    # unknown (no judgment, or too few for an interval or P(top k)): a dash, as the report shows it
    shown = frame.style.format("{:.3f}", subset=numbers, na_rep="–").format("{:.2f}", subset=[chance], na_rep="–")
    progress = st.column_config.ProgressColumn(min_value=0.0, max_value=1.0, format="%.2f")
    st.dataframe(shown, hide_index=True, width="stretch", column_config={} if board.too_few.any() else {chance: progress})
    st.caption(board.method() + " " + status_words(protocol.settings.question.kind))


def replay_result(protocol: ProtocolState) -> ProtocolResult | None:
    """The comparison with the full human evaluation (replay mode only)."""
    setup = state.setup()
    if setup is not None and setup.mode != "replay":
        return None
    return compare_with_reference(protocol)


def win_rates(protocol: ProtocolState) -> None:
    """Posterior win rates under the protocol's decision model: all pairs compact, one in detail."""
    s = protocol.settings
    counts = views.pair_counts(protocol)
    densities = cache.win_rates(counts, s.model, s.mu, s.gamma, s.seed)
    pairs = list(protocol.table.pairs)
    st.caption(views.win_rates_caption(protocol))
    labels = [f"{a} vs {b}" for a, b in pairs]
    chosen = st.selectbox("Pair in detail", range(len(pairs)), format_func=labels.__getitem__, key="pe.w.detail_pair")
    st.plotly_chart(win_rate_figure(densities[chosen], *pairs[chosen], counts=counts[chosen][0]), key="pe.fig.winrate")
    if protocol.table.k > 1 and s.model == "full":
        own = "" if s.statistic == "sign" else f" (the model's posterior: the {s.statistic} statistic's test does not read it)"
        st.caption(f"What each metric contributes to this pair's θ{own} (the same judgments, the metrics taken away one at a time):")
        with user_errors("Measuring the metrics' contributions", stop=False):
            st.dataframe(cache.contributions(protocol, int(chosen)), hide_index=True)
    with st.expander(f"All {len(pairs)} pairs", expanded=len(pairs) <= 30):
        st.plotly_chart(cache.win_rate_ridge_figure(tuple(pairs), counts, s.model, s.mu, s.gamma, s.seed), key="pe.fig.ridge")


def decided_dag(protocol: ProtocolState, result: ProtocolResult | None) -> None:
    """A tier question's systems ruled out, in order; the DAG of the pairs decided (left out where a
    tier question's closed testing decided none: it would show systems and no edge)."""
    if protocol.settings.question.entry.tier:
        ruled_out = exclusions_frame(protocol)
        st.caption(exclusion_words(protocol))
        if len(ruled_out):
            st.dataframe(ruled_out, hide_index=True)
        if not (protocol.decisions != UNDECIDED).any():
            return
    pairs = tuple(protocol.table.pairs)
    theta = tuple(float(t) for t in protocol.status.theta)
    reference = verdicts = None
    if result is not None and len(result.pairs) == len(pairs):
        reference = tuple(int(c) for c in result.comparison.reference)
        verdicts = views.table_verdicts(protocol, result)  # the Pairs tab's verdicts: an open pair is no decision and no omission
    control = views.CONTROL_WORDS[protocol.settings.error_control].split(" (")[0]
    title = f"What is decided so far (error control: {control}, γ = {protocol.settings.gamma:g})" + (
        "<br><sup>decisions coloured by error type against the full human evaluation; open pairs are not drawn</sup>" if reference else ""
    )
    figure, cycles = cache.decisions_dag_figure(pairs, tuple(int(d) for d in protocol.decisions), reference, theta, title, verdicts)
    st.plotly_chart(figure, key="pe.fig.dag")
    if cycles:
        st.warning("The decisions contain a cycle: " + escape_markdown("; ".join(" > ".join((*c, c[0])) for c in cycles)))


def pairs_view(protocol: ProtocolState, result: ProtocolResult | None) -> None:
    """The comparison with the human evaluation (replay) and the table of pairs."""
    if result is not None:
        comparison_view(protocol, result)
    frame = views.pairs_frame(protocol)
    if views.decides_tier_only(protocol):
        st.caption("Closed testing decides which systems can still be in the answer, not pairs (Decided so far lists them).")
    else:
        undecided = frame["decision"] == views.DECISION_WORDS[UNDECIDED]
        if st.toggle(f"Only the {int(undecided.sum())} undecided pairs", key="pe.w.only_undecided"):
            frame = frame[undecided]
    st.dataframe(frame, hide_index=True, width="stretch", height=320)
    st.caption(views.theta_words(protocol))


def comparison_view(protocol: ProtocolState, result: ProtocolResult) -> None:
    """Cost in the study's unit, the paper's pair-outcome fraction, agreement with the full evaluation
    over the pairs scored (:attr:`~prefeval_core.protocol.result.ProtocolResult.verdicts`, as every view counts them)."""
    correct = result.correct_share
    c = st.columns(4)
    c[0].metric(
        f"Share of the full evaluation's {result.unit}",
        f"{result.cost_fraction:.1%}",
        help=f"{result.cost_used:,} of the {result.cost_available:,} {result.unit} the full evaluation of this question has",
    )
    c[1].metric("Pair outcomes used (the paper's Ann.)", f"{result.annotation_fraction:.1%}", help="human pair outcomes used / available")
    c[2].metric("Mean KLD to the human evaluation", f"{result.comparison.mean_kld:.4f} nats")
    if result.top_k is None:
        c[3].metric("Correct decisions", "–" if np.isnan(correct) else f"{correct:.1%}", help=views.SCORED_WORDS)
    else:  # a tier question is judged by its tier: pairs it never decided are no verdict
        c[3].metric("Tier members left out", result.top_k.false_exclusions, help="members of the full evaluation's tier not in the answer")
    if result.top_k is not None:
        top = result.top_k
        st.markdown(
            escape_markdown(f"Full evaluation's top-{top.answer.k} tier: {', '.join(top.reference.members)}. ")
            + ("**Exact match.**" if top.exact_match else f"False exclusions: **{top.false_exclusions}**, extras: **{top.extras}**.")
        )
    if views.decides_tier_only(protocol):  # closed testing asked no pair: every scored pair would read as an omission
        return
    st.caption(f"{views.verdicts_words(result)} {views.SCORED_WORDS}")
    share = {"share of the scored pairs": st.column_config.NumberColumn(format="%.3f")}
    st.dataframe(views.verdicts_frame(result), hide_index=True, column_config=share)


def baselines_view(protocol: ProtocolState, result: ProtocolResult | None) -> None:
    """The run beside PPI++, the classical interval and Bradley–Terry on the judgments it revealed (replay)."""
    if result is None:
        st.info("The baselines are compared with the full human evaluation: replay studies only.")
        return
    st.caption(views.baselines_caption(protocol, result))
    if st.button("Compare with PPI++ and Bradley–Terry", key="pe_baselines"):
        with user_errors("Running the baselines"):
            st.dataframe(cache.baselines(protocol), hide_index=True, width="stretch")
