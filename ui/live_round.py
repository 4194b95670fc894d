"""Deciding a live round from the stored judgments, on the Protocol and the Annotate pages alike:
part-way through a request it asks first, and the lead keeps the unjudged requests queued (the
default) or withdraws them; nothing stored is dropped either way. A replay study is never fed
(:func:`~prefeval_core.workflow.feed.decide_stored` refuses it)."""

from __future__ import annotations

import streamlit as st

from prefeval_core.workflow.feed import Judgment, OpenRequests, ProtocolState, decide_stored, round_progress, stored_judgments
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.studies import request_scale, study_store
from ui import cache, state, studies
from ui.errors import user_errors
from ui.page import flash


def fresh_judgments(choice: DataChoice, protocol: ProtocolState) -> list[Judgment]:
    """The study's complete, combined stored judgments the protocol has not seen."""
    record = st.session_state[state.STUDY]
    per_item = 1 if record is None else record.judgments_per_item
    return stored_judgments(study_store(), choice.key, protocol, study_id=None if record is None else record.id, per_item=per_item)


CONFIRM = "pe.confirm_decide"


def _decide(choice: DataChoice, protocol: ProtocolState, open_requests: OpenRequests = "keep") -> None:
    record, setup = st.session_state[state.STUDY], state.setup()
    with user_errors("Deciding the round", stop=False):
        early = decide_stored(
            study_store(), choice.key, protocol, mode=None if setup is None else setup.mode, study_id=None if record is None else record.id,
            per_item=1 if record is None else record.judgments_per_item, open_requests=open_requests,
            scale=request_scale(cache.dataset(choice), protocol),
        )  # fmt: skip
        studies.commit(early.state, "feed")
        p = early.progress
        if early.withdrawn:
            after = f"; the {early.withdrawn} still open are withdrawn" + (
                f" ({early.kept} asked again: nothing else is left)." if early.kept else "."
            )
        else:
            after = f"; the {early.kept} still open stay in the queue." if early.kept else "."
        flash(
            f"Round {protocol.round + 1} decided with {p.judged} of {p.requested} requested judgments"
            + (f" (and {p.extra} more)" if p.extra else "")
            + after
        )
    st.session_state.pop(CONFIRM, None)


def decide_button(choice: DataChoice, protocol: ProtocolState) -> None:
    """Feed the complete stored judgments and decide. Part-way through a request it asks first:
    keep the requests nobody judged yet queued, or withdraw them (judgments that still come in
    for them are stored, and count once they are asked for again)."""
    fed = fresh_judgments(choice, protocol)
    progress = round_progress(protocol, fed)
    label = f"Decide now with {len(fed)} new judgment{'' if len(fed) == 1 else 's'} ({progress.judged} of {progress.requested} requested)"
    if not st.session_state.get(CONFIRM):
        if st.button(label, key="pe_feed", disabled=not fed):
            if progress.open:
                st.session_state[CONFIRM] = True
                st.rerun()
            _decide(choice, protocol)
            st.rerun()
        return
    st.warning(
        f"{progress.open} of the {progress.requested} requested judgments are not made yet. Keep them queued: annotators "
        "go on with them in the next round (with any new requests). Or withdraw them: nobody is asked for them any more, and "
        "the next round asks for others instead. Every stored judgment counts either way."
    )
    keep, withdraw, wait = st.columns(3)
    keep.button(
        f"Decide now, keep the {progress.open} open requests queued", key="pe_decide_keep", on_click=_decide, args=(choice, protocol),
        type="primary",
    )  # fmt: skip
    withdraw.button(
        f"Decide now, withdraw the {progress.open} open requests", key="pe_decide_withdraw", on_click=_decide,
        args=(choice, protocol, "withdraw"),
    )  # fmt: skip
    wait.button("Wait for more judgments", key="pe_decide_wait", on_click=st.session_state.pop, args=(CONFIRM, None))
