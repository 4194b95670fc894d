"""prefeval's core: data handling and statistics, no user interface.

The notebook API is at the top level (:mod:`prefeval_core.api`, DataFrames in and out)::

    import prefeval_core as pe
    data = pe.load_sample("summeval")                     # pe.load(paths...), pe.load(ratings=df, ...)
    pe.replay(data, human="human:relevance", metrics=["rougeL"]).to_frame()

``load``, ``load_sample``, ``samples``, ``pair_counts``, ``decide``, ``replay``, ``check_metric``,
``studies``, ``resume`` and ``annotators`` are imported on first use, so that ``import prefeval_core`` (and the
CLI's commands that never compute) stays free of JAX; so are the data types (``Dataset``, ``PairTable``, ...),
so that it stays free of pandas too (``prefeval --version`` imports only this module and the CLI's parser).

The verbs go through the application layer (:mod:`prefeval_core.workflow`), as the CLI and the
dashboard do; the data types come from where they are defined. The folder layout follows the
method (``docs/method.md`` in the project; the papers it cites are listed there):
``vocabulary/outcomes`` (§1), ``data`` (reading and checking input), ``pairs/preferences`` (§2),
``pairs/counts`` (§3). Importing the core has no side effects: JAX flags are set by entry points
(``app.py``, ``tests/conftest.py``, the CLI).
"""

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from prefeval_core.errors import DataError, EngineError, PrefevalError, Problem, SettingsError, ValidationReport

if TYPE_CHECKING:  # the lazily imported names, for type checkers (`X as X`: re-exported)
    from prefeval_core.api import AnnotatorReport as AnnotatorReport
    from prefeval_core.api import Decisions as Decisions
    from prefeval_core.api import MetricCheckResult as MetricCheckResult
    from prefeval_core.api import ReplayResult as ReplayResult
    from prefeval_core.api import StudyList as StudyList
    from prefeval_core.api import StudyView as StudyView
    from prefeval_core.api import annotators as annotators
    from prefeval_core.api import check_metric as check_metric
    from prefeval_core.api import decide as decide
    from prefeval_core.api import load as load
    from prefeval_core.api import load_sample as load_sample
    from prefeval_core.api import pair_counts as pair_counts
    from prefeval_core.api import replay as replay
    from prefeval_core.api import resume as resume
    from prefeval_core.api import samples as samples
    from prefeval_core.api import studies as studies
    from prefeval_core.data.dataset import Dataset as Dataset
    from prefeval_core.data.dataset import load_dataset as load_dataset
    from prefeval_core.pairs.counts import CountTriple as CountTriple
    from prefeval_core.pairs.counts import CountTriples as CountTriples
    from prefeval_core.pairs.counts import PairTable as PairTable
    from prefeval_core.pairs.counts import align_outcomes as align_outcomes
    from prefeval_core.pairs.counts import count_triple as count_triple
    from prefeval_core.pairs.counts import count_triples as count_triples
    from prefeval_core.pairs.preferences import PairOutcomes as PairOutcomes
    from prefeval_core.pairs.preferences import pair_outcomes as pair_outcomes

_API = (
    "AnnotatorReport",
    "Decisions",
    "MetricCheckResult",
    "ReplayResult",
    "StudyList",
    "StudyView",
    "annotators",
    "check_metric",
    "decide",
    "load",
    "load_sample",
    "pair_counts",
    "replay",
    "resume",
    "samples",
    "studies",
)

_DATA_TYPES = {
    "CountTriple": "prefeval_core.pairs.counts",
    "CountTriples": "prefeval_core.pairs.counts",
    "PairTable": "prefeval_core.pairs.counts",
    "align_outcomes": "prefeval_core.pairs.counts",
    "count_triple": "prefeval_core.pairs.counts",
    "count_triples": "prefeval_core.pairs.counts",
    "Dataset": "prefeval_core.data.dataset",
    "load_dataset": "prefeval_core.data.dataset",
    "PairOutcomes": "prefeval_core.pairs.preferences",
    "pair_outcomes": "prefeval_core.pairs.preferences",
}
"""The data types and functions imported on first use (they bring numpy and pandas), by module."""


def __getattr__(name: str) -> Any:
    if name in _API or name in _DATA_TYPES:
        module = importlib.import_module(_DATA_TYPES.get(name, "prefeval_core.api"))
        value = getattr(module, name)
        globals()[name] = value  # the next access is a plain attribute
        return value
    raise AttributeError(f"module 'prefeval_core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, *_DATA_TYPES})


__all__ = [
    *_API,
    "CountTriple",
    "CountTriples",
    "DataError",
    "Dataset",
    "EngineError",
    "PairOutcomes",
    "PairTable",
    "PrefevalError",
    "Problem",
    "SettingsError",
    "ValidationReport",
    "__version__",
    "align_outcomes",
    "count_triple",
    "count_triples",
    "load_dataset",
    "pair_outcomes",
]
