"""prefeval's core: data handling and statistics, no user interface.

The folder layout follows the method (``../shared/docs/method.md`` in the project's
workplace, restated in the README): ``outcomes`` (§1), ``data`` (reading and checking
input), ``preferences`` (§2), ``counts`` (§3). Importing the core has no side effects: JAX
flags are set by entry points (``app.py``, ``tests/conftest.py``, the CLI).
"""

__version__ = "0.1.0"

from prefeval_core.counts import CountTriple, CountTriples, PairTable, align_outcomes, count_triple, count_triples
from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.errors import DataError, Problem, ValidationReport
from prefeval_core.preferences import PairOutcomes, pair_outcomes

__all__ = [
    "CountTriple",
    "CountTriples",
    "DataError",
    "Dataset",
    "PairOutcomes",
    "PairTable",
    "Problem",
    "ValidationReport",
    "align_outcomes",
    "count_triple",
    "count_triples",
    "load_dataset",
    "pair_outcomes",
]
