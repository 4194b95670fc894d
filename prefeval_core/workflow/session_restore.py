"""Restoring a session file: everything the file names is checked against its data before the
shell changes anything (the core decides, the shell acts).

:func:`restore_session` builds the study setup, the metric check and the protocol state of a
:class:`~prefeval_core.workflow.session.SessionSnapshot` on its dataset and returns them; it refuses
(with a :class:`~prefeval_core.workflow.session.SessionFileError` naming the JSON path) an unknown
sample, raters or systems the data do not have, annotations of other data or of items and
systems not in it, settings that contradict each other, and a protocol state its study table
contradicts. What a hand-edited file could bend is refused too, never dropped in silence: two
annotations with one identity, an identity or request id that is not the one the annotation's
content makes (a copy under a new identity would be stored twice), a protocol state whose
settings differ from the study setup in any field (or name raters the data do not have), and a
round record that lists a pair twice. A refused file changes nothing: the caller writes to the
store and the session only after it returned.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from prefeval_core.data.dataset import Dataset
from prefeval_core.data.schema import at_path
from prefeval_core.errors import DataError, PrefevalError, Problem
from prefeval_core.protocol import ProtocolState, StudyTable, state_from_dict
from prefeval_core.protocol.ideal_metric import IDEAL_METRIC_NAME
from prefeval_core.store import Comparison, Judgment, Store, request_id_for
from prefeval_core.workflow.metric_check import MetricCheck
from prefeval_core.workflow.session import SessionFileError, SessionSnapshot, sample_names
from prefeval_core.workflow.setup import StudySetup, protocol_settings
from prefeval_core.workflow.studies import Study, begin_study
from prefeval_core.workflow.study import study_table

T = TypeVar("T")


@dataclass(frozen=True)
class RestoredSession:
    """What a checked session file sets: the setup, the metric check and the protocol state
    (each ``None`` where the file has none), and the judgments to store."""

    setup: StudySetup | None
    check: MetricCheck | None
    protocol: ProtocolState | None
    annotations: tuple[Judgment, ...] = ()


def _unknown(file: str, path: str, what: str, name: str, known: Sequence[str]) -> SessionFileError:
    shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
    where = "among the bundled samples" if what == "sample" else "in the data"
    return SessionFileError([Problem("error", "unknown_name", f"{what} {name!r} is not {where}; known: {shown}", file, path=path)])


def session_dataset(snap: SessionSnapshot, file: str, load: Callable[[], Dataset] | None = None) -> Dataset:
    """The session's dataset (``load``: the caller's cached loader); a sample that does not
    exist or files that do not load are refused at ``data``."""
    if snap.data.kind == "sample" and snap.data.name not in sample_names():
        raise _unknown(file, "data.name", "sample", snap.data.name, sample_names())
    try:
        return load() if load is not None else snap.data.load()
    except DataError as error:
        raise at_path(error, SessionFileError, file=file, prefix="data") from None


def _check_names(file: str, names: Iterator[tuple[str, str, str]], dataset: Dataset) -> None:
    """``(path, what, name)``: raters (``what`` = "rater"), systems or items the data must hold."""
    known = {"rater": (*dataset.raters, IDEAL_METRIC_NAME), "system": dataset.systems, "item": dataset.items}
    for path, what, name in names:
        if name not in known[what]:
            raise _unknown(file, path, what, name, known[what])


def _rater_names(snap: SessionSnapshot, setup: StudySetup | None, check: MetricCheck | None) -> Iterator[tuple[str, str, str]]:
    if snap.human is not None:
        yield "human", "rater", snap.human
    yield from ((f"metrics[{i}]", "rater", m) for i, m in enumerate(snap.metrics))
    if setup is not None:
        yield "setup.human", "rater", setup.human
        yield from ((f"setup.metrics[{i}]", "rater", m) for i, m in enumerate(setup.metrics))
        yield from ((f"setup.question.baselines[{i}]", "system", b) for i, b in enumerate(setup.question.baselines))
    if check is not None:
        yield "check.human", "rater", check.human
        yield "check.metric", "rater", check.metric


def _judgment_names(annotations: Sequence[Judgment]) -> Iterator[tuple[str, str, str]]:
    for index, judgment in enumerate(annotations):
        yield f"annotations[{index}].item_id", "item", judgment.item_id
        if isinstance(judgment, Comparison):
            yield f"annotations[{index}].system_a", "system", judgment.system_a
            yield f"annotations[{index}].system_b", "system", judgment.system_b
        else:
            yield f"annotations[{index}].system", "system", judgment.system


def _refused(file: str, path: str, message: str, kind: str = "bad_value") -> SessionFileError:
    return SessionFileError([Problem("error", kind, message, file, path=path)])


def _check_identities(file: str, annotations: Sequence[Judgment]) -> None:
    """Each annotation's request id and identity are the ones its content makes, and no two
    share an identity (the store would keep one and drop the other)."""
    first: dict[str, int] = {}
    for index, judgment in enumerate(annotations):
        expected_request = request_id_for(judgment.dataset, judgment.study_id, judgment.item_id, judgment.task.systems)
        if judgment.request_id != expected_request:
            message = "not the request id of the annotation's data, study, item and systems (changed after saving)"
            raise _refused(file, f"annotations[{index}].request_id", message)
        try:
            expected = replace(judgment, identity="").identity
        except PrefevalError as error:
            raise at_path(error, SessionFileError, file=file, prefix=f"annotations[{index}]") from None
        if judgment.identity != expected:
            message = "not the identity the annotation's origin, request, annotator and answer make (changed after saving)"
            raise _refused(file, f"annotations[{index}].identity", message)
        earlier = first.setdefault(judgment.identity, index)
        if earlier != index:
            message = f"the same judgment as annotations[{earlier}] (one identity); a session holds each judgment once"
            raise _refused(file, f"annotations[{index}].identity", message)


def _check_protocol(file: str, protocol: ProtocolState, setup: StudySetup, dataset: Dataset) -> None:
    """The protocol state belongs to ``setup``: every setting as the setup makes it (raters the
    data have), and no round record listing a pair twice."""
    settings = protocol.settings
    raters = [("protocol.settings.human", settings.human)] if settings.human is not None else []
    raters += [(f"protocol.settings.metrics[{i}]", m) for i, m in enumerate(settings.metrics)]
    _check_names(file, ((path, "rater", name) for path, name in raters), dataset)
    saved, expected = settings.as_dict(), protocol_settings(setup, protocol.table).as_dict()
    for name in expected:
        if saved.get(name) != expected[name]:
            message = f"{saved.get(name)!r} does not match the study setup, which makes it {expected[name]!r}"
            raise _refused(file, f"protocol.settings.{name}", message, "bad_state")
    for index, record in enumerate(protocol.records):
        pairs = record.pairs.tolist()
        if len(set(pairs)) != len(pairs):
            repeated = next(p for p in pairs if pairs.count(p) > 1)
            raise _refused(file, f"protocol.records[{index}].pairs", f"the pair {repeated} is listed twice", "bad_state")


def _built(build: Callable[[], T], file: str, prefix: str) -> T:
    """``build()``, its refusals at ``prefix`` of the file."""
    try:
        return build()
    except PrefevalError as error:
        raise at_path(error, SessionFileError, file=file, prefix=prefix) from None


def restore_session(
    snap: SessionSnapshot,
    dataset: Dataset,
    *,
    file: str = "session.json",
    table_of: Callable[[StudySetup], StudyTable] | None = None,
    known_studies: Collection[int] = (),
) -> RestoredSession:
    """The setup, check and protocol state of ``snap`` on ``dataset`` (``table_of``: the
    caller's cached study-table builder; default :func:`~prefeval_core.workflow.study_table`),
    and its judgments; a judgment of a study the store does not know (``known_studies``: the
    session was saved on another machine) is kept outside any study, with its identity.

    Raises:
        SessionFileError: a name the data do not have, annotations of other data, settings that
            contradict each other, a protocol state without a setup or contradicting its table.
    """
    setup = None if snap.setup is None else _built(lambda: StudySetup.from_dict(dict(snap.setup or {})), file, "setup")
    check = None if snap.check is None else _built(lambda: MetricCheck(**(snap.check or {})), file, "check")
    _check_names(file, _rater_names(snap, setup, check), dataset)
    for index, judgment in enumerate(snap.annotations):
        if judgment.dataset != snap.data.key:
            message = f"an annotation of other data ({judgment.dataset!r}); this session's data are {snap.data.key!r}"
            raise SessionFileError([Problem("error", "unknown_name", message, file, path=f"annotations[{index}].dataset")])
    _check_names(file, _judgment_names(snap.annotations), dataset)
    _check_identities(file, snap.annotations)
    protocol = None
    if snap.protocol is not None:
        if setup is None:
            message = "the session has a protocol state but no study setup"
            raise SessionFileError([Problem("error", "bad_state", message, file, path="setup")])
        known = setup
        table = _built(lambda: (table_of or (lambda s: study_table(dataset, s)))(known), file, "setup")
        protocol = _built(lambda: state_from_dict(snap.protocol, table), file, "protocol")
        _check_protocol(file, protocol, setup, dataset)
    annotations = tuple(j if j.study_id is None or j.study_id in known_studies else replace(j, study_id=None) for j in snap.annotations)
    return RestoredSession(setup, check, protocol, annotations)


@dataclass(frozen=True)
class SessionRestored:
    """A session file restored into the store: what it sets (``session``), how many of its
    judgments were new there (``added``), and the study its run continues as (``None`` without a run)."""

    session: RestoredSession
    added: int
    study: Study | None


def restore_into_store(
    store: Store,
    snap: SessionSnapshot,
    file: str = "session.json",
    *,
    load: Callable[[], Dataset] | None = None,
    table_of: Callable[[StudySetup], StudyTable] | None = None,
) -> SessionRestored:
    """Check ``snap`` whole (:func:`session_dataset`, :func:`restore_session`; ``load`` and
    ``table_of``: the caller's cached builders), then store its judgments in one transaction and
    continue its run, if any, as a new study. A refused file changes nothing in the store.

    Raises:
        SessionFileError: see :func:`restore_session`; nothing is stored then.
    """
    dataset = session_dataset(snap, file, load)
    known = {s.study.id for s in store.list_studies()}
    restored = restore_session(snap, dataset, file=file, table_of=table_of, known_studies=known)
    added = store.add_many(restored.annotations).added  # one transaction: all or nothing, before any study
    study = None
    if restored.protocol is not None and restored.setup is not None:
        study = begin_study(store, snap.data, dataset, restored.setup, "restored from a session file", state=restored.protocol)
    return SessionRestored(restored, added, study)
