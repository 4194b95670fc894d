"""Is A better than B? The decision function on count triples (method.md §4), for a pair table
given as counts: a pair typed on the command line, a JSON-lines batch (``prefeval decide``), a
counts frame (the notebook API's ``pair_counts`` and ``decide``).

Counts are in the order ``>, =, <``; a confusion matrix ``K`` has rows = metric outcome, columns
= human outcome. A counts frame names outcomes ``a`` (A better, code 0, ``>``), ``tie`` (code 1,
``=``) and ``b`` (B better, code 2, ``<``): ``n_a, n_tie, n_b`` human outcomes on the revealed
items, ``k_<metric>_<human>`` the confusion counts on them, ``m_a, m_tie, m_b`` the metric's
outcomes on the items without a revealed human outcome.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.data.dataset import Dataset
from prefeval_core.data.json_rows import line_too_deep
from prefeval_core.decision import DecisionResult, DecisionSettings, Model, Sampler, SamplerSettings, decide_pairs
from prefeval_core.decision.decide import check_counts, check_mu
from prefeval_core.errors import MAX_PROBLEMS_PER_KIND, DataError, PrefevalError, Problem, SettingsError, settings_error
from prefeval_core.pairs.counts import align_outcomes, count_triples
from prefeval_core.pairs.preferences import pair_outcomes
from prefeval_core.vocabulary.fields import INT_LIMIT
from prefeval_core.vocabulary.outcomes import SYMBOLS

OUTCOME_NAMES: Final = ("a", "tie", "b")
"""Column-name parts of the outcome codes 0, 1, 2 (``>``, ``=``, ``<``)."""
N_COLUMNS: Final = tuple(f"n_{o}" for o in OUTCOME_NAMES)
K_COLUMNS: Final = tuple(f"k_{metric}_{human}" for metric in OUTCOME_NAMES for human in OUTCOME_NAMES)
"""Row-major: rows = metric outcome, columns = human outcome."""
M_COLUMNS: Final = tuple(f"m_{o}" for o in OUTCOME_NAMES)
COUNT_COLUMNS: Final = N_COLUMNS + K_COLUMNS + M_COLUMNS
"""Every count column of a counts frame (see the module docstring)."""


# --- one pair, or a batch file --------------------------------------------------------------


@dataclass(frozen=True)
class PairCounts:
    """One pair's counts, checked: ``n`` (3,), ``K`` (3, 3), ``m`` (3,), known ``mu`` (3, 3) or
    None, and the pair's ``id`` as given (None when it has none)."""

    n: np.ndarray
    K: np.ndarray
    m: np.ndarray
    mu: np.ndarray | None
    id: Any


def checked_pair(n: np.ndarray, K: np.ndarray, m: np.ndarray, mu: np.ndarray | None = None, pair_id: Any = None) -> PairCounts:
    """The pair, after the engine's own checks of its counts (and of ``mu``).

    Raises:
        SettingsError: counts that are not whole numbers >= 0 or contradict each other, or a bad ``mu``.
    """
    n_arr, K_arr, m_arr = check_counts(n[None], K[None], m[None])
    if mu is not None:
        check_mu(mu, m_arr)
    return PairCounts(n_arr[0], K_arr[0], m_arr[0], mu, pair_id)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-empty lines of ``path`` with their 1-based numbers, read one at a time."""
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line
    except OSError as exc:
        raise DataError.single("unreadable", f"{path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise DataError.single("encoding", f"{path}: not UTF-8 text") from None


def read_batch(path: Path) -> Iterator[PairCounts]:
    """The pairs of a JSON-lines batch, one line at a time: an object per line with ``n`` (3
    numbers), ``confusion`` or ``K`` (3x3, optional), ``m`` (optional), ``mu`` (optional) and ``id``
    (optional). Check the whole file with :func:`scan_batch` first.

    Raises:
        DataError: a line that is not such an object, naming the file and line.
    """
    for number, line in _lines(path):
        yield _parse_line(path, number, line)


_BATCH_DEPTH = 4
"""Nesting of a batch line: the object, a 3x3 matrix (2 levels), and one level of slack."""


BATCH_KEYS: Final = ("n", "confusion", "K", "m", "mu", "id")
"""The keys a batch line may hold (``confusion`` and ``K`` name the same matrix)."""
_COUNTS_WORDS: Final = {
    "n": "three counts (>, =, <)",
    "m": "three counts (>, =, <)",
    "confusion": "a 3x3 matrix of counts (rows = metric outcome, columns = human outcome)",
    "mu": "a 3x3 matrix of probabilities (rows = metric outcome, columns = human outcome)",
}


class _BadLine(ValueError):
    """A batch line's problem, in words."""


def _parse_line(path: Path, number: int, line: str) -> PairCounts:
    if line_too_deep(line, _BATCH_DEPTH) is not None:
        message = f"a line nested more than {_BATCH_DEPTH} levels deep; expected an object of counts (n, confusion, m, mu, id)"
        raise DataError.single("invalid_batch_line", message, file=str(path), line=number)
    try:
        record = _record(line)
        n = _numbers(record, "n", (3,))
        assert n is not None  # _record checked it
        K = _numbers(record, "confusion" if "confusion" in record else "K", (3, 3))
        m = _numbers(record, "m", (3,))
        mu = None if record.get("mu") is None else _numbers(record, "mu", (3, 3))
        return checked_pair(n, np.zeros((3, 3)) if K is None else K, np.zeros(3) if m is None else m, mu, record.get("id"))
    except SettingsError as exc:
        message = "; ".join(p.message for p in exc.problems)
        raise DataError.single("invalid_counts", message, file=str(path), line=number) from None
    except _BadLine as exc:
        raise DataError.single("invalid_batch_line", str(exc), file=str(path), line=number) from None


def _record(line: str) -> dict[str, Any]:
    """A batch line as its object, its keys checked (none unknown, the matrix given once, ``n`` there)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _BadLine(f"not JSON ({exc.msg} at character {exc.pos + 1}); expected an object of counts (n, confusion, m, mu, id)") from None
    if not isinstance(record, dict):
        raise _BadLine(f"expected an object of counts (n, confusion, m, mu, id), found a JSON {type(record).__name__}")
    unknown = [key for key in record if key not in BATCH_KEYS]
    if unknown:
        raise _BadLine(f"unknown key(s) {', '.join(map(repr, unknown))}; expected {', '.join(BATCH_KEYS)} (confusion and K are one matrix)")
    if "confusion" in record and "K" in record:
        raise _BadLine("give the confusion matrix once, as 'confusion' or as 'K'")
    if record.get("n") is None:
        raise _BadLine(f"key 'n' is missing; expected {_COUNTS_WORDS['n']}")
    return record


def _numbers(record: dict[str, Any], key: str, shape: tuple[int, ...]) -> np.ndarray | None:
    """``record[key]`` as an array of ``shape`` (``None`` when absent or null); numbers only (no
    text, no true / false)."""
    value = record.get(key)
    if value is None:
        return None
    expected = _COUNTS_WORDS["confusion" if key == "K" else key]
    rows = value if len(shape) == 2 and isinstance(value, list) else [value]
    cells = [cell for row in rows if isinstance(row, list) for cell in row]
    fits = all(isinstance(row, list) and len(row) == shape[-1] for row in rows) and len(rows) == (shape[0] if len(shape) == 2 else 1)
    if not fits or not all(isinstance(cell, int | float) and not isinstance(cell, bool) for cell in cells):
        raise _BadLine(f"key {key!r}: expected {expected}, found {json.dumps(value)[:80]}")
    array = np.asarray(cells, dtype=float).reshape(shape)
    if np.any(np.abs(array) >= INT_LIMIT):
        raise _BadLine(f"key {key!r}: a count of {INT_LIMIT:,} or more")
    return array


def scan_batch(path: Path) -> tuple[int, bool]:
    """Check every line of a batch (one at a time); the number of pairs and whether they give ``mu``.

    Raises:
        DataError: a bad line (its number named), ``mu`` on some lines only, or no pair at all.
    """
    total, known = 0, None
    for number, line in _lines(path):
        pair = _parse_line(path, number, line)
        if known is None:
            known = pair.mu is not None
        elif known != (pair.mu is not None):
            raise DataError.single("mixed_mu", "give mu on every line or on none", file=str(path), line=number)
        total += 1
    if not total:
        raise DataError.single("empty_batch", f"{path} holds no pair")
    return total, bool(known)


def decide_stream(
    pairs: Iterator[PairCounts], settings: DecisionSettings, *, chunk: int, progress: Callable[[int], None] | None = None
) -> Iterator[dict[str, Any]]:
    """Decide ``pairs`` ``chunk`` at a time; yield one JSON-ready row per pair, in order (see
    :func:`decision_row`). A pair's draws are seeded by its position, so its result does not
    depend on ``chunk``; memory stays bounded by ``chunk``. ``progress`` hears the number of
    pairs decided after each chunk."""
    done = 0
    while batch := _take(pairs, chunk):
        result = decide_pairs(
            np.stack([p.n for p in batch]),
            np.stack([p.K for p in batch]),
            np.stack([p.m for p in batch]),
            model=settings.model,
            mu=None if batch[0].mu is None else np.stack([p.mu for p in batch]),  # type: ignore[misc]
            sampler=settings.sampler,
            gamma=settings.gamma,
            seed=settings.seed,
            settings=settings.sampler_settings,
            pair_ids=np.arange(done, done + len(batch)),
        )
        done += len(batch)
        if progress is not None:
            progress(done)
        for i, pair in enumerate(batch):
            yield decision_row(result, i, pair.id)


def _take(pairs: Iterator[PairCounts], size: int) -> list[PairCounts]:
    batch = []
    for pair in pairs:
        batch.append(pair)
        if len(batch) == size:
            break
    return batch


def decision_row(result: DecisionResult, i: int, pair_id: Any = None) -> dict[str, Any]:
    """Pair ``i`` of ``result`` as ``decide --json`` prints it: ``id`` (if given), ``theta``,
    ``decision`` (``>``, ``=``, ``<``) and its ``decision_code``, ``p_mean``, ``theta_mc_se``,
    ``ess`` and ``rhat`` (null where not finite), ``method``, ``sampler``, ``settings``."""

    def number(x: float) -> float | None:
        return None if math.isnan(x) or math.isinf(x) else float(x)

    row: dict[str, Any] = {} if pair_id is None else {"id": pair_id}
    row.update(
        theta=float(result.theta[i]),
        decision=SYMBOLS[int(result.decision[i])],
        decision_code=int(result.decision[i]),
        p_mean=[float(v) for v in result.p_mean[i]],
        theta_mc_se=float(result.theta_mc_se[i]),
        ess=number(result.ess[i]),
        rhat=number(result.rhat[i]),
        method=result.method[i],
        sampler=result.sampler,
        settings=result.settings.as_dict(),
    )
    return row


# --- counts frames ---------------------------------------------------------------------------


def pair_counts_frame(
    data: Dataset, human: str, metric: str | None = None, *, eps_human: float = 0.0, eps_metric: float = 0.0
) -> pd.DataFrame:
    """The count triple of every pair ``human`` covers, with every human outcome revealed, as a
    counts frame: ``system_a, system_b`` (canonical order) and :data:`COUNT_COLUMNS`. Items the
    metric rated but the human did not count in ``m``; without a metric, ``k_*`` and ``m_*`` are 0.
    ``eps_human``, ``eps_metric``: tie thresholds of score differences (method.md §2).

    Raises:
        UnknownNameError: a rater is not in the data.
        CoverageError: a rater gives no preferences.
    """
    human_outcomes = pair_outcomes(data, human, eps=eps_human)
    table = align_outcomes(human_outcomes, None if metric is None else pair_outcomes(data, metric, eps=eps_metric))
    triples = count_triples(table, table.human >= 0)
    counts = np.concatenate([triples.n, triples.K.reshape(-1, 9), triples.m], axis=1)
    frame = pd.DataFrame(counts, columns=list(COUNT_COLUMNS))
    frame.insert(0, "system_a", [a for a, _ in table.pairs])
    frame.insert(1, "system_b", [b for _, b in table.pairs])
    return frame


@dataclass(frozen=True)
class Decisions:
    """The decisions of a counts frame (:func:`decide_frame`).

    Attributes:
        labels: the input's other columns (``system_a``, ``system_b``, ...), with its index.
        result: the engine's :class:`~prefeval_core.decision.DecisionResult` (arrays in row order).
        model: the decision model used.
        gamma: the significance level.
    """

    labels: pd.DataFrame
    result: DecisionResult
    model: Model
    gamma: float

    def to_frame(self) -> pd.DataFrame:
        """The labels, then per pair ``theta = P(p> > p<)``, ``decision`` (``>`` A better, ``<``
        B better, ``=`` undecided), the posterior means ``p_a, p_tie, p_b``, ``theta_mc_se``
        (0 where exact), ``ess``, ``rhat`` and the route that decided it (``method``)."""
        r = self.result
        decided = {
            "theta": r.theta,
            "decision": [SYMBOLS[int(code)] for code in r.decision],
            **{f"p_{o}": r.p_mean[:, i] for i, o in enumerate(OUTCOME_NAMES)},
            "theta_mc_se": r.theta_mc_se,
            "ess": r.ess,
            "rhat": r.rhat,
            "method": list(r.method),
        }
        return pd.concat([self.labels, pd.DataFrame(decided, index=self.labels.index)], axis=1)

    def __repr__(self) -> str:
        codes = self.result.decision
        better, worse = int(np.sum(codes == 0)), int(np.sum(codes == 2))
        return (
            f"<Decisions: {self.result.n_pairs} pairs, {better} A better, {worse} B better, {self.result.n_pairs - better - worse} "
            f"undecided; model {self.model}, sampler {self.result.sampler}, γ = {self.gamma}>"
        )


def decide_frame(
    counts: pd.DataFrame,
    *,
    model: Model | None = None,
    mu: npt.ArrayLike | None = None,
    sampler: Sampler = "fast",
    gamma: float = 0.05,
    seed: int = 0,
    settings: SamplerSettings | None = None,
) -> Decisions:
    """Decide every pair of a counts frame at once.

    Args:
        counts: ``n_a, n_tie, n_b`` required; ``k_*`` (all nine) and ``m_*`` (all three)
            optional, 0 where absent. Other columns are labels, carried to the result.
        model: by default ``known_mu`` when ``mu`` is given, ``full`` when the frame has metric
            counts, else ``human_only``.
        mu, sampler, gamma, seed, settings: as :func:`prefeval_core.decision.decide_pairs`.

    Raises:
        DataError: a count column missing or half given, or a count that is not a whole
            number >= 0 (naming row and column).
        SettingsError: an option out of range, or counts that contradict each other.
    """
    n, K, m = (_count_block(counts, columns) for columns in (N_COLUMNS, K_COLUMNS, M_COLUMNS))
    if n is None:
        missing = [c for c in N_COLUMNS if c not in counts.columns]
        raise DataError.single("missing_column", f"a counts frame needs {', '.join(N_COLUMNS)}", file="counts", column=missing[0])
    has_metric = K is not None or m is not None
    chosen: Model = model or ("known_mu" if mu is not None else "full" if has_metric else "human_only")
    try:
        result = decide_pairs(
            n,
            None if K is None else K.reshape(-1, 3, 3),
            m,
            model=chosen,
            mu=mu,
            sampler=sampler,
            gamma=gamma,
            seed=seed,
            settings=settings,
        )
    except ValueError as error:
        if isinstance(error, PrefevalError):
            raise
        raise settings_error(str(error)) from None
    labels = counts.drop(columns=[c for c in COUNT_COLUMNS if c in counts.columns])
    return Decisions(labels, result, chosen, gamma)


def _count_block(counts: pd.DataFrame, columns: tuple[str, ...]) -> npt.NDArray[np.int64] | None:
    """The frame's ``columns`` as whole numbers, ``None`` when none of them is there."""
    present = [c for c in columns if c in counts.columns]
    if not present:
        return None
    if len(present) < len(columns):
        missing = [c for c in columns if c not in counts.columns]
        message = f"give all of {', '.join(columns)} or none; missing: {', '.join(missing)}"
        raise DataError.single("missing_column", message, file="counts", column=missing[0])
    values = counts[list(columns)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~(np.isfinite(values) & (values >= 0) & (values == np.round(values)))
    if bad.any():
        problems = [
            Problem(
                "error",
                "bad_number",
                f"expected a whole number >= 0, got {counts.iloc[row][columns[col]]!r}",
                "counts",
                row + 1,
                None,
                columns[col],
            )
            for row, col in zip(*np.nonzero(bad), strict=True)
        ]
        raise DataError(problems[:MAX_PROBLEMS_PER_KIND])
    return values.astype(np.int64)
