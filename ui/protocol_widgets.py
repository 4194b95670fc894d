"""Widgets of the Protocol page: settings, the step buttons, and what the rounds show."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from prefeval_core.comparison import ERROR_LABELS
from prefeval_core.counts import PairTable
from prefeval_core.feed import protocol_annotations
from prefeval_core.figures.posterior import win_rate_figure
from prefeval_core.protocol import (
    POLICIES,
    ProtocolResult,
    ProtocolSettings,
    ProtocolState,
    apply_annotations,
    decide_round,
    is_finished,
    new_state,
    protocol_result,
    replay_source,
    run_protocol,
    undo_round,
)
from prefeval_core.session import DataChoice
from prefeval_core.store import open_store
from ui import cache, state
from ui.errors import escape_markdown, user_errors
from ui.page import flash

MODES = {"replay": "Replay: reveal the human outcomes already in the data", "live": "Live: people annotate what the protocol asks for"}
MODELS = {"full": "Metric + human (full model)", "human_only": "Human only"}
DECISION_WORDS = {0: "> A better", 1: "undecided", 2: "< B better"}


def default_settings(table: PairTable, metric: str | None) -> dict[str, Any]:
    """Starting values: a budget of a quarter of the human outcomes available, the paper's batch of 10."""
    pool = int(table.human_pool().sum())
    return {
        "mode": "replay",
        "budget": max(1, pool // 4),
        "batch": 10,
        "gamma": 0.05,
        "model": "full" if metric else "human_only",
        "sampler": "fast",
        "policy": "paper",
        "seed": 0,
        "eps_metric": 0.0,
    }


def settings_values(table: PairTable, metric: str | None) -> dict[str, Any]:
    values = st.session_state[state.SETTINGS] or default_settings(table, metric)
    return {**default_settings(table, metric), **values}


def make_settings(values: dict[str, Any], human: str, metric: str | None) -> ProtocolSettings:
    model = values["model"] if metric else "human_only"
    return ProtocolSettings(
        budget=int(values["budget"]), batch=int(values["batch"]), gamma=float(values["gamma"]), model=model,
        sampler=values["sampler"], policy=values["policy"], seed=int(values["seed"]), human=human, metric=metric,
        eps_metric=float(values["eps_metric"]),
    )  # fmt: skip


def protocol_table(choice: DataChoice, protocol: ProtocolState) -> PairTable:
    """The outcome table a protocol was started on (same raters and tie thresholds)."""
    s = protocol.settings
    return cache.pair_table(choice, s.human, s.metric, s.eps_human, s.eps_metric)


def settings_form(choice: DataChoice, human: str, metric: str | None) -> None:
    """Settings in a form (nothing runs until *Start*); *Start* creates a fresh protocol."""
    table = cache.pair_table(choice, human, metric)
    values = settings_values(table, metric)
    pool = int(table.human_pool().sum())
    with st.form("pe.w.settings"):
        mode = st.radio("Mode", list(MODES), index=list(MODES).index(values["mode"]), format_func=MODES.__getitem__, horizontal=True)
        c = st.columns(4)
        budget = c[0].number_input(
            "Budget (human outcomes)", 1, 10_000_000, int(values["budget"]), help=f"{pool:,} human outcomes in the data"
        )
        batch = c[1].number_input("Batch size per pair", 1, 10_000, int(values["batch"]))
        gamma = c[2].number_input("Significance level γ", 0.001, 0.5, float(values["gamma"]), step=0.01, format="%.3f")
        seed = c[3].number_input("Seed", 0, 2**31 - 1, int(values["seed"]))
        c = st.columns(4)
        models = list(MODELS) if metric else ["human_only"]
        model = c[0].selectbox(
            "Decision model", models, index=models.index(values["model"]) if values["model"] in models else 0, format_func=MODELS.get
        )
        sampler = c[1].selectbox(
            "Sampler", ["fast", "nuts"], index=["fast", "nuts"].index(values["sampler"]), help="nuts: the slow reference sampler"
        )
        policy = c[2].selectbox("Allocation policy", list(POLICIES), index=list(POLICIES).index(values["policy"]))
        eps = c[3].number_input(
            "Metric tie threshold", 0.0, 1e6, float(values["eps_metric"]), format="%.4f", help="score differences up to this count as ties"
        )
        if st.form_submit_button("Start protocol", type="primary"):
            new_values = {"mode": mode, "budget": budget, "batch": batch, "gamma": gamma, "model": model, "sampler": sampler}
            new_values |= {"policy": policy, "seed": seed, "eps_metric": eps}
            with user_errors("Starting the protocol"):
                settings = make_settings(new_values, human, metric)
                start_table = cache.pair_table(choice, human, metric, 0.0, settings.eps_metric)
                st.session_state[state.SETTINGS] = new_values
                st.session_state[state.PROTOCOL] = new_state(start_table, settings, pool="human" if mode == "replay" else "all")


def step_buttons(choice: DataChoice, protocol: ProtocolState) -> None:
    """*Next batch*, *Run to the end* (replay), *Undo last round*; the new state goes to the session."""
    table = protocol_table(choice, protocol)
    replay = (st.session_state[state.SETTINGS] or {}).get("mode", "replay") == "replay"
    finished = is_finished(protocol)
    fed = [] if replay else protocol_annotations(open_store().comparisons(choice.key), protocol)
    c = st.columns(3)
    next_label = "Next batch" if replay else f"Decide with {len(fed)} new stored annotations"
    if c[0].button(next_label, key="pe_next", type="primary", disabled=finished if replay else not fed, width="stretch"):
        with user_errors("The protocol round"), st.spinner("Deciding ..."):
            if replay:
                st.session_state[state.PROTOCOL] = run_protocol(protocol, replay_source(table), max_rounds=1)
            else:
                st.session_state[state.PROTOCOL] = decide_round(apply_annotations(protocol, fed))
        st.rerun()
    if not replay and not fed:
        st.caption("Live mode: annotate the requested items on the Annotate page (or upload annotated request files there), then decide.")
    if c[1].button("Run to the end", key="pe_run", disabled=finished or not replay, width="stretch"):
        bar = st.progress(0.0, text="Starting ...")

        def progress(s: ProtocolState) -> None:
            undecided = int(sum(p.undecided for p in s.pairs))
            bar.progress(
                min(1.0, s.human_used / max(1, s.settings.budget)),
                text=f"Round {s.round}: {s.human_used:,} human outcomes, {undecided} pairs undecided",
            )

        with user_errors("Running the protocol"):
            st.session_state[state.PROTOCOL] = run_protocol(protocol, replay_source(table), progress=progress)
        st.rerun()
    if c[2].button("Undo last round", key="pe_undo", disabled=protocol.round == 0 and not protocol.open_reveals, width="stretch"):
        st.session_state[state.PROTOCOL] = undo_round(protocol)
        st.rerun()
    if finished:
        st.info("The protocol has finished: the budget is spent, every pair is decided, or no undecided pair has items left.")


def feed_store_button(choice: DataChoice, protocol: ProtocolState) -> None:
    """One click: the stored annotations into the protocol, then a round of decisions."""
    fed = protocol_annotations(open_store().comparisons(choice.key), protocol)
    if st.button(f"Feed {len(fed)} new annotations into the protocol and decide", key="pe_feed", disabled=not fed):
        with user_errors("Feeding the annotations"):
            st.session_state[state.PROTOCOL] = decide_round(apply_annotations(protocol, fed))
        flash(f"Fed {len(fed)} annotations into the protocol; round {protocol.round + 1} decided.")
        st.rerun()


def status(protocol: ProtocolState) -> None:
    decided = int(np.sum(protocol.decisions != 1))
    c = st.columns(4)
    c[0].metric("Round", protocol.round)
    c[1].metric("Budget spent", f"{protocol.human_used:,}", help=f"human outcomes revealed, of a budget of {protocol.settings.budget:,}")
    c[2].metric("Budget left", f"{protocol.budget_left:,}")
    c[3].metric("Decided pairs", f"{decided} / {len(protocol.pairs)}", help="pairs with a significant winner; the others are undecided")


def pairs_frame(protocol: ProtocolState) -> pd.DataFrame:
    """One row per pair: human outcomes used, latest theta, decision, posterior mean rates."""
    rows = []
    for p in protocol.pairs:
        mean = p.p_mean()
        rows.append(
            {
                "system A": p.system_a, "system B": p.system_b, "human outcomes": len(p.revealed),
                "θ = P(p> > p<)": p.theta, "decision": DECISION_WORDS[p.decision],
                "p>": mean[0], "p=": mean[1], "p<": mean[2],
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def theta_history_figure(protocol: ProtocolState) -> go.Figure:
    """``theta`` of every pair after each round in which it was decided on (one line per pair)."""
    figure = go.Figure()
    colours = {0: "#0072B2", 1: "#999999", 2: "#D55E00"}
    for p in protocol.pairs:
        if p.history:
            figure.add_trace(
                go.Scatter(
                    x=[h.round for h in p.history], y=[h.theta for h in p.history], mode="lines+markers",
                    name=f"{p.system_a} vs {p.system_b}", line={"color": colours[p.decision], "width": 1},
                    marker={"size": 4}, showlegend=False,
                    hovertemplate=f"{p.system_a} vs {p.system_b}<br>round %{{x}}: θ = %{{y:.3f}}<extra></extra>",
                )
            )  # fmt: skip
    gamma = protocol.settings.gamma
    for level in (gamma / 2, 1 - gamma / 2):
        figure.add_hline(y=level, line_dash="dash", line_color="#555555")
    figure.update_layout(
        title="θ = P(p> > p<) per pair across rounds (dashed: decision thresholds; blue A better, vermillion B better, grey undecided)",
        xaxis_title="round", yaxis_title="θ", yaxis_range=[-0.02, 1.02], height=360, margin={"t": 60, "b": 40},
    )  # fmt: skip
    return figure


def win_rates(protocol: ProtocolState) -> None:
    """Posterior win rates under the protocol's decision model: all pairs compact, one in detail."""
    s = protocol.settings
    counts = protocol.counts()
    pair_counts = tuple(
        (tuple(map(int, counts.n[i])), tuple(map(int, counts.K[i].ravel())), tuple(map(int, counts.m[i])))
        for i in range(len(protocol.pairs))
    )
    densities = cache.win_rates(pair_counts, s.model, s.mu, s.gamma, s.seed)
    pairs = [(p.system_a, p.system_b) for p in protocol.pairs]
    st.caption(win_rates_caption(protocol))
    labels = [f"{a} vs {b}" for a, b in pairs]
    chosen = st.selectbox("Pair in detail", range(len(pairs)), format_func=labels.__getitem__, key="pe.w.detail_pair")
    st.plotly_chart(win_rate_figure(densities[chosen], *pairs[chosen], counts=pair_counts[chosen][0]), key="pe.fig.winrate")
    with st.expander(f"All {len(pairs)} pairs", expanded=len(pairs) <= 30):
        st.plotly_chart(cache.win_rate_ridge_figure(tuple(pairs), pair_counts, s.model, s.mu, s.gamma, s.seed), key="pe.fig.ridge")


def win_rates_caption(protocol: ProtocolState) -> str:
    """What the win-rate plots show, in plain words."""
    if protocol.settings.model == "human_only":
        return "Exact posterior of each pair's rates from its revealed human outcomes, Dirichlet(n + 1): the posterior the decisions use."
    nuts = " (drawn with the fast sampler; the decisions used NUTS on the same model)" if protocol.settings.sampler == "nuts" else ""
    model = "the full model, μ uncertain" if protocol.settings.model == "full" else "the model with a known μ"
    return (
        f"The posterior the decisions use, under {model}: human outcomes revealed so far "
        f"and the metric's outcomes on the other items. Histograms of {cache.WIN_RATE_DRAWS:,} draws per pair{nuts}; pairs without "
        "metric-only items are exact Dirichlet(n + 1). θ in these plots is the share of draws with p> > p<, so it differs from the "
        "table's θ by Monte-Carlo error (about ±0.01)."
    )


def decided_dag(protocol: ProtocolState, result: ProtocolResult | None) -> None:
    pairs = tuple((p.system_a, p.system_b) for p in protocol.pairs)
    theta = tuple(np.nan if p.theta is None else p.theta for p in protocol.pairs)
    reference = None if result is None else tuple(int(c) for c in result.comparison.reference)
    title = "What is decided so far" + (" (edges coloured by error type against the full human evaluation)" if result else "")
    figure, cycles = cache.decisions_dag_figure(pairs, tuple(int(d) for d in protocol.decisions), reference, theta, title)
    st.plotly_chart(figure, key="pe.fig.dag")
    if cycles:
        st.warning("The decisions contain a cycle: " + escape_markdown("; ".join(" > ".join((*c, c[0])) for c in cycles)))


def replay_result(choice: DataChoice, protocol: ProtocolState) -> ProtocolResult | None:
    """The comparison with the full human evaluation (replay mode only)."""
    if (st.session_state[state.SETTINGS] or {}).get("mode") != "replay":
        return None
    return protocol_result(protocol, protocol_table(choice, protocol))


def pairs_view(protocol: ProtocolState, result: ProtocolResult | None) -> None:
    """The comparison with the human evaluation (replay) and the table of pairs."""
    if result is not None:
        comparison_view(result)
    frame = pairs_frame(protocol)
    undecided = frame["decision"] == DECISION_WORDS[1]
    if st.toggle(f"Only the {int(undecided.sum())} undecided pairs", key="pe.w.only_undecided"):
        frame = frame[undecided]
    st.dataframe(frame, hide_index=True, width="stretch", height=320)


def comparison_view(result: ProtocolResult) -> None:
    correct = np.isin(result.comparison.error_types, ["correct_significant", "correct_undecided"]).mean()
    c = st.columns(4)
    c[0].metric("Annotations used", f"{result.annotation_fraction:.1%}", help="human outcomes used / all human outcomes available")
    c[1].metric("Annotations saved", f"{1 - result.annotation_fraction:.1%}", help="compared with the full human evaluation")
    c[2].metric("Mean KLD to the human evaluation", f"{result.comparison.mean_kld:.4f} nats")
    c[3].metric("Correct decisions", f"{correct:.1%}", help="same outcome as the full human evaluation (significant or not)")
    types, counts = np.unique(result.comparison.error_types, return_counts=True)
    frame = pd.DataFrame({"error type": [ERROR_LABELS.get(t, t) for t in types], "pairs": counts, "share": counts / counts.sum()})
    st.dataframe(frame, hide_index=True)
