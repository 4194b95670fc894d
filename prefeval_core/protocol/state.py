"""The protocol's state: what has been revealed, and every round's decisions (method.md §5, §12).

The state sits on top of a static :class:`~prefeval_core.protocol.table.StudyTable`: it
records, per judgment slot — a grid cell ``system * I + item`` in a ratings study, a table row
in a comparisons study — the round it was revealed in (0: not yet), its value (a score, or an
outcome code 0 ``>`` / 1 ``=`` / 2 ``<`` in canonical pair order) and the judgments it cost,
plus one :class:`RoundRecord` per completed round. Human judgments revealed after the last
completed round belong to the open round ``round + 1`` until it is decided. The slots of an open
request the lead withdrew when deciding a round early are listed with that round (``withdrawn``):
a request asks for them only once nothing else is left (:mod:`prefeval_core.protocol.steps`).

Serialised (:func:`state_to_json`), the state holds only what changes (reveals, records,
settings) and the table's fingerprint; it is restored against the same table, rebuilt from the
data and the study's setup (:func:`state_from_json`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from prefeval_core.data.limits import MAX_BYTES
from prefeval_core.data.schema import at_path, load_json, validated
from prefeval_core.decision import dirichlet_mean
from prefeval_core.errors import SettingsError
from prefeval_core.pairs.counts import JointCounts, joint_counts
from prefeval_core.protocol.settings import POOL_STATISTICS, ProtocolSettings
from prefeval_core.protocol.state_schema import FORMAT_VERSION, StateDocument, check_against_table
from prefeval_core.protocol.table import StudyTable
from prefeval_core.vocabulary.outcomes import MISSING, TIE, codes_from_differences


@dataclass(frozen=True)
class Reveals:
    """Per judgment slot (module docstring): ``round`` (int64, 0 = not revealed), ``value``
    (float64; NaN where not revealed) and ``cost`` (int64 judgments paid)."""

    round: npt.NDArray[np.int64]
    value: npt.NDArray[np.float64]
    cost: npt.NDArray[np.int64]

    @classmethod
    def empty(cls, slots: int) -> Reveals:
        return cls(np.zeros(slots, dtype=np.int64), np.full(slots, np.nan), np.zeros(slots, dtype=np.int64))

    def with_values(
        self, slots: npt.NDArray[np.int64], values: npt.NDArray[np.float64], costs: npt.NDArray[np.int64], round_number: int
    ) -> Reveals:
        rounds, value, cost = self.round.copy(), self.value.copy(), self.cost.copy()
        rounds[slots], value[slots], cost[slots] = round_number, values, costs
        return Reveals(rounds, value, cost)

    def without_round(self, round_number: int) -> Reveals:
        drop = self.round == round_number
        return Reveals(np.where(drop, 0, self.round), np.where(drop, np.nan, self.value), np.where(drop, 0, self.cost))


@dataclass(frozen=True)
class RoundDecisions:
    """What a round decided for its D chosen pairs (those that got new judgments while undecided).

    Attributes:
        theta: (D,) ``P(p> > p< | data)`` under the decision model.
        decision: (D,) decision codes (1 undecided).
        p_mean: (D, 3) posterior mean of ``(p>, p=, p<)``.
        log_evidence: (D, 2) log e-values for ``>`` and ``<`` (error control ``anytime``), NaN otherwise.
        log_numerator: (D, 2) running log numerators of the metric e-process for ``>`` and ``<``
            after the round (0 without one).
        futile: (D,) pairs the futility rule stopped (their evidence is unlikely to reach the threshold before
            their items run out).
        equivalent: (D,) pairs shown equivalent within the margin δ (method.md §13); ``None``:
            none (rules without equivalence decisions).
    """

    theta: npt.NDArray[np.float64]
    decision: npt.NDArray[np.int8]
    p_mean: npt.NDArray[np.float64]
    log_evidence: npt.NDArray[np.float64]
    log_numerator: npt.NDArray[np.float64]
    futile: npt.NDArray[np.bool_]
    equivalent: npt.NDArray[np.bool_] | None = None

    def fields(self) -> dict[str, Any]:
        """The decisions' arrays by field name (no copies)."""
        return {f.name: getattr(self, f.name) for f in fields(RoundDecisions)}


@dataclass(frozen=True, kw_only=True)
class RoundRecord(RoundDecisions):
    """A completed round: its decisions (:class:`RoundDecisions`) and where they apply.

    Attributes:
        round: 1-based round number.
        pairs: (D,) the pair indices the decisions are about.
        members: (S,) top-k members after the round (all True for the other questions).
        cost: judgments revealed in the round.
    """

    round: int
    pairs: npt.NDArray[np.int64]
    members: npt.NDArray[np.bool_]
    cost: int


@dataclass(frozen=True)
class PairStatus:
    """Every pair's latest values (from the records): decision (P,) int8, theta (P,) (NaN if
    never decided on), p_mean (P, 3), log_evidence (P, 2), log_numerator (P, 2), futile (P,),
    equivalent (P,), last_round (P,) (0: never decided on)."""

    decision: npt.NDArray[np.int8]
    theta: npt.NDArray[np.float64]
    p_mean: npt.NDArray[np.float64]
    log_evidence: npt.NDArray[np.float64]
    log_numerator: npt.NDArray[np.float64]
    futile: npt.NDArray[np.bool_]
    equivalent: npt.NDArray[np.bool_]
    last_round: npt.NDArray[np.int64]


def _apply_record(status: PairStatus, record: RoundRecord) -> None:
    """Write ``record``'s values into ``status`` for its pairs (a later record overrides an earlier one)."""
    index = record.pairs
    status.decision[index] = record.decision
    status.theta[index] = record.theta
    status.p_mean[index] = record.p_mean
    status.log_evidence[index] = record.log_evidence
    status.log_numerator[index] = record.log_numerator
    status.futile[index] = record.futile
    if record.equivalent is not None:
        status.equivalent[index] = record.equivalent
    status.last_round[index] = record.round


@dataclass(frozen=True)
class ProtocolState:
    """The whole protocol: settings, table, reveals, the completed rounds' records and the
    withdrawn requests: ``(slot, round)`` pairs sorted by slot, ``round`` the round whose early
    decision withdrew the slot's request."""

    settings: ProtocolSettings
    table: StudyTable
    reveals: Reveals
    records: tuple[RoundRecord, ...] = field(default=())
    withdrawn: tuple[tuple[int, int], ...] = field(default=())

    @property
    def round(self) -> int:
        """Completed rounds."""
        return len(self.records)

    @property
    def cost_used(self) -> int:
        """Judgments revealed so far, in the study's unit."""
        return int(self.reveals.cost.sum())

    @property
    def budget_left(self) -> int:
        return self.settings.budget - self.cost_used

    @property
    def open_reveals(self) -> int:
        """Judgment slots revealed since the last completed round."""
        return int(np.count_nonzero(self.reveals.round > self.round))

    @cached_property
    def withdrawn_slots(self) -> npt.NDArray[np.bool_]:
        """(slots,) whether the slot's request was withdrawn (see ``withdrawn``)."""
        mask = np.zeros(self.reveals.round.size, dtype=bool)
        mask[[slot for slot, _ in self.withdrawn]] = True
        return mask

    @cached_property
    def status(self) -> PairStatus:
        P = self.table.n_pairs
        n = self.human_outcome_counts()
        status = PairStatus(
            decision=np.full(P, TIE, dtype=np.int8),
            theta=np.full(P, np.nan),
            p_mean=dirichlet_mean(n),
            log_evidence=np.full((P, 2), np.nan),
            log_numerator=np.zeros((P, 2)),
            futile=np.zeros(P, dtype=bool),
            equivalent=np.zeros(P, dtype=bool),
            last_round=np.zeros(P, dtype=np.int64),
        )
        for record in self.records:
            _apply_record(status, record)
        return status

    def with_record(self, record: RoundRecord) -> ProtocolState:
        """This state with the round ``record`` closed. The reveals are the same, so the rows they
        reveal carry over, and the pairs' status is this one's updated by the record: a round costs
        its own pairs, not every record so far again."""
        closed = replace(self, records=(*self.records, record))
        if "row_reveals" in self.__dict__:
            closed.__dict__["row_reveals"] = self.row_reveals
        if "status" in self.__dict__:
            status = PairStatus(*(getattr(self.status, f.name).copy() for f in fields(PairStatus)))
            _apply_record(status, record)
            closed.__dict__["status"] = status
        return closed

    @property
    def decisions(self) -> npt.NDArray[np.int8]:
        return self.status.decision

    @property
    def members(self) -> npt.NDArray[np.bool_]:
        """(S,) top-k members after the last round (all systems before the first)."""
        return self.records[-1].members if self.records else np.ones(len(self.table.systems), dtype=bool)

    @cached_property
    def row_reveals(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8]]:
        """Per table row: the round its human outcome was revealed (0: not yet) and that outcome
        (-1 where not revealed). In a ratings study a row is revealed once both of its outputs
        are rated (in the later of the two rounds); its outcome is that of the two scores."""
        table = self.table
        if table.grid is None:
            rounds = self.reveals.round
            outcome = np.where(rounds > 0, np.nan_to_num(self.reveals.value, nan=MISSING), MISSING).astype(np.int8)
            return rounds, outcome
        a, b = table.row_cells
        ra, rb = self.reveals.round[a], self.reveals.round[b]
        rounds = np.where((ra > 0) & (rb > 0), np.maximum(ra, rb), 0)
        outcome = np.full(len(rounds), MISSING, dtype=np.int8)
        both = np.flatnonzero(rounds)  # few rows of a large table: score differences only there
        outcome[both] = codes_from_differences(self.reveals.value[a[both]] - self.reveals.value[b[both]], table.eps_human)
        return rounds, outcome

    def revealed_counts(self, *, before_round: int | None = None) -> JointCounts:
        """Joint counts (method.md §3 with k metrics) of every pair from the judgments revealed so
        far, or from those revealed before round ``before_round``."""
        rounds, outcome = self.row_reveals
        revealed = rounds > 0 if before_round is None else (rounds > 0) & (rounds < before_round)
        table = self.table
        metrics = table.metric_raters if table.k else ("none",)
        codes = table.metrics if table.k else np.full((len(rounds), 1), MISSING, dtype=np.int8)
        return joint_counts(metrics, table.row_pair, np.where(revealed, outcome, MISSING), codes, revealed, table.n_pairs)

    def human_outcome_counts(self) -> npt.NDArray[np.int64]:
        """(P, 3) the human outcomes revealed so far per pair, order ``>, =, <`` (the ``n`` of
        :meth:`revealed_counts`, without the metric patterns)."""
        rounds, outcome = self.row_reveals
        used = np.flatnonzero((rounds > 0) & (outcome >= 0))
        flat = np.bincount(self.table.row_pair[used] * 3 + outcome[used], minlength=3 * self.table.n_pairs)
        return flat.reshape(self.table.n_pairs, 3).astype(np.int64)

    def pair_outcomes_used(self) -> npt.NDArray[np.int64]:
        """(P,) human pair outcomes revealed per pair (the paper's unit)."""
        rounds, outcome = self.row_reveals
        used = (rounds > 0) & (outcome >= 0)
        return np.bincount(self.table.row_pair[used], minlength=self.table.n_pairs).astype(np.int64)

    def free_cells(self) -> npt.NDArray[np.bool_]:
        """(S, I) outputs a ratings study may still ask to rate: requestable and not rated yet."""
        grid = self.table.grid
        assert grid is not None
        return np.asarray(grid.requestable & (self.reveals.round.reshape(grid.requestable.shape) == 0))

    def free_rows(self) -> npt.NDArray[np.bool_]:
        """(R,) rows a comparisons study may still ask to judge: requestable and not judged yet."""
        rounds, _ = self.row_reveals
        return np.asarray(self.table.requestable & (rounds == 0))

    def rows_left(self) -> npt.NDArray[np.int64]:
        """(P,) rows each pair can still get: requestable and not revealed yet."""
        rounds, _ = self.row_reveals
        left = self.table.row_requestable_for_pairs & (rounds == 0)
        return np.bincount(self.table.row_pair[left], minlength=self.table.n_pairs).astype(np.int64)


def new_state(table: StudyTable, settings: ProtocolSettings) -> ProtocolState:
    """A fresh state (round 0, nothing revealed)."""
    if settings.unit != table.unit:
        raise SettingsError.single("bad_setting", f"the settings say unit {settings.unit!r}, the table {table.unit!r}", column="unit")
    _require_statistic_fits(table, settings)
    slots = table.grid.scores.size if table.grid is not None else len(table.row_pair)
    return ProtocolState(settings=settings, table=table, reveals=Reveals.empty(slots))


def _require_statistic_fits(table: StudyTable, settings: ProtocolSettings) -> None:
    if table.annotator_units and settings.statistic not in POOL_STATISTICS:
        raise SettingsError.single(
            "bad_setting",
            f"statistic {settings.statistic!r} treats items as independent, but this table's units are annotators' ratings of "
            f"the same outputs: use {' or '.join(POOL_STATISTICS)} (valid by the seeded order alone)",
            column="statistic",
        )


def state_to_dict(state: ProtocolState) -> dict[str, Any]:
    """JSON-ready dict of what the state adds to its table (lossless)."""
    revealed = np.flatnonzero(state.reveals.round > 0)
    return {
        "format": FORMAT_VERSION,
        "table": state.table.fingerprint,
        "settings": state.settings.as_dict(),
        "round": state.round,
        "reveals": [[int(s), float(state.reveals.value[s]), int(state.reveals.round[s]), int(state.reveals.cost[s])] for s in revealed],
        "records": [_record_to_dict(r) for r in state.records],
        **({"withdrawn": [list(w) for w in state.withdrawn]} if state.withdrawn else {}),
    }


def _record_to_dict(record: RoundRecord) -> dict[str, Any]:
    return {
        "round": record.round,
        "pairs": record.pairs.tolist(),
        "theta": _floats(record.theta),
        "decision": record.decision.tolist(),
        "p_mean": [_floats(row) for row in record.p_mean],
        "log_evidence": [_floats(row) for row in record.log_evidence],
        "log_numerator": [_floats(row) for row in record.log_numerator],
        "futile": record.futile.tolist(),
        **({} if record.equivalent is None else {"equivalent": record.equivalent.tolist()}),
        "members": record.members.tolist(),
        "cost": record.cost,
    }


def _floats(values: npt.NDArray[np.float64]) -> list[float | None]:
    """JSON has no NaN: missing values are ``null``."""
    return [None if math.isnan(v) else float(v) for v in values.tolist()]


def _array(values: Sequence[float | None]) -> npt.NDArray[np.float64]:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)


def state_from_dict(data: Any, table: StudyTable) -> ProtocolState:
    """Inverse of :func:`state_to_dict`, on the table the state was made on; the value is checked
    against :mod:`~prefeval_core.protocol.state_schema` before anything is built.

    Raises:
        SettingsError: another format version, a state made on another table (its fingerprint
            differs: other data, raters or study options), or a value of the wrong type or out of
            bounds (the problem's ``path`` names it, e.g. ``records[3].theta[7]``).
    """
    if isinstance(data, dict) and data.get("format") != FORMAT_VERSION:
        raise SettingsError.single(
            "bad_state", f"unsupported protocol state format {data.get('format')!r}; expected {FORMAT_VERSION}", path="format"
        )
    document = validated(StateDocument, data, error=SettingsError, file=None)
    if document.table != table.fingerprint:
        raise SettingsError.single("bad_state", "this protocol state was made on other data or another study setup", path="table")
    check_against_table(document, table)
    try:
        settings = ProtocolSettings.from_dict(document.settings.model_dump())
    except SettingsError as error:
        raise at_path(error, SettingsError, file=None, prefix="settings") from None
    _require_statistic_fits(table, settings)
    slots = table.grid.scores.size if table.grid is not None else len(table.row_pair)
    reveals = Reveals.empty(slots)
    for slot, value, round_number, cost in document.reveals:
        reveals.value[slot], reveals.round[slot], reveals.cost[slot] = value, round_number, cost
    records = tuple(
        RoundRecord(
            round=r.round,
            pairs=np.array(r.pairs, dtype=np.int64),
            theta=_array(r.theta),
            decision=np.array(r.decision, dtype=np.int8),
            p_mean=np.array([_array(row) for row in r.p_mean], dtype=np.float64).reshape(-1, 3),
            log_evidence=np.array([_array(row) for row in r.log_evidence], dtype=np.float64).reshape(-1, 2),
            log_numerator=np.array([_array(row) for row in r.log_numerator], dtype=np.float64).reshape(-1, 2),
            futile=np.array(r.futile, dtype=bool),
            equivalent=None if r.equivalent is None else np.array(r.equivalent, dtype=bool),
            members=np.array(r.members, dtype=bool),
            cost=r.cost,
        )
        for r in document.records
    )
    return ProtocolState(settings=settings, table=table, reveals=reveals, records=records, withdrawn=tuple(sorted(document.withdrawn)))


def state_to_json(state: ProtocolState) -> str:
    return json.dumps(state_to_dict(state), allow_nan=False, separators=(",", ":"))


def state_from_json(text: str, table: StudyTable) -> ProtocolState:
    """:func:`state_from_dict` of a JSON text, read with the bounds of :func:`prefeval_core.data.schema.load_json`."""
    return state_from_dict(load_json(text, file="protocol state", error=SettingsError, max_bytes=MAX_BYTES), table)
