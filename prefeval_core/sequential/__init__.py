"""Error control over repeated looks, and futility (method.md §12).

The protocol decides after every round. With the paper's rule (``ErrorControl`` ``"none"``) each
look at a pair whose true rates are equal is another chance to declare a winner. With
``"anytime"`` a pair with ``p> = p<`` ends a run significant with probability at most ``gamma``,
whatever the batch, the pool size, the number of rounds and the reason a run stops: decisions
come from e-processes and Ville's inequality.

Everything is count-based and vectorised over P pairs. Per round the protocol calls:

1. human only: ``anytime_decisions(n, gamma)`` with ``n`` (P, 3);
   with a metric: ``log_numerator = update_log_numerator(previous_counts, counts, log_numerator, mu)``
   (start from ``initial_log_numerator(P)``; the only state to keep per pair), then
   ``anytime_decisions(counts, gamma, log_numerator=log_numerator, mu=mu)``;
2. ``futility(counts_or_n, remaining, gamma, rule=..., beta=..., log_numerator=..., mu=...,
   remaining_patterns=..., seed=...)`` (imported from its module, :mod:`~prefeval_core.sequential.futility`,
   whose name it shares) for the pairs still undecided: which to stop asking about.

Modules: ``human`` (the human-only mixture e-process), ``mle`` (constrained maximum likelihood of
the metric model, certified), ``metric`` (the metric e-process), ``evidence`` (combining them:
decisions), ``futility``, ``simulation`` (simulated runs of one pair, for the benchmark and the
tests), ``tails`` (log incomplete beta without underflow); for the score statistics of method.md §13,
``betting`` (the symmetry test), ``pool_betting`` (the exact pool-mean test), ``mixture`` and
``pool_clt`` (the asymptotic pool-mean test with the metric as a control variate).

Sources: Ville 1939 (Étude critique de la notion de collectif); Robbins 1970 (Statistical methods
related to the law of the iterated logarithm); Wasserman, Ramdas & Balakrishnan 2020 (Universal
inference, PNAS); Ramdas, Grünwald, Vovk & Shafer 2023 (Game-theoretic statistics and safe
anytime-valid inference, Statistical Science); Howard, Ramdas, McAuliffe & Sekhon 2021
(Time-uniform, nonparametric, nonasymptotic confidence sequences, Annals of Statistics);
Spiegelhalter, Freedman & Blackburn 1986 (Monitoring clinical trials: conditional or predictive
power?, Controlled Clinical Trials); Varadhan & Roland 2008 (SQUAREM).
"""

from typing import TYPE_CHECKING

from prefeval_core.lazy import lazy_package

if TYPE_CHECKING:  # the package's names, imported on first use (`X as X`: re-exported)
    from prefeval_core.sequential.evidence import METRIC_SHARE as METRIC_SHARE
    from prefeval_core.sequential.evidence import ErrorControl as ErrorControl
    from prefeval_core.sequential.evidence import EvidenceResult as EvidenceResult
    from prefeval_core.sequential.evidence import anytime_decisions as anytime_decisions
    from prefeval_core.sequential.evidence import log_thresholds as log_thresholds
    from prefeval_core.sequential.futility import FUTILITY_RULES as FUTILITY_RULES
    from prefeval_core.sequential.futility import Futility as Futility
    from prefeval_core.sequential.futility import FutilityResult as FutilityResult
    from prefeval_core.sequential.human import MIXTURE_CONCENTRATION as MIXTURE_CONCENTRATION
    from prefeval_core.sequential.human import human_log_e as human_log_e
    from prefeval_core.sequential.metric import initial_log_numerator as initial_log_numerator
    from prefeval_core.sequential.metric import metric_log_e as metric_log_e
    from prefeval_core.sequential.metric import update_log_numerator as update_log_numerator
    from prefeval_core.sequential.metric import vote_counts as vote_counts
    from prefeval_core.sequential.simulation import RunsResult as RunsResult
    from prefeval_core.sequential.simulation import Scenario as Scenario
    from prefeval_core.sequential.simulation import simulate_runs as simulate_runs

__getattr__, __all__ = lazy_package(__name__, __file__)
