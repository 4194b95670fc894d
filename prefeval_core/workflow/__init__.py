"""The application layer: what the CLI and the dashboard both call (one path, one set of numbers).

* :mod:`~prefeval_core.workflow.setup`: :class:`StudySetup`, the one typed description of a study;
* :mod:`~prefeval_core.workflow.study`: dataset + setup -> study table -> protocol run -> summary
  (the stable JSON shapes);
* :mod:`~prefeval_core.workflow.papers`: the papers' tables (naive metric, averages over seeds).

The names below are imported on first use, so that importing one light module of the layer
(``prefeval app`` needs only :mod:`~prefeval_core.workflow.dashboard`) does not load the protocol.
"""

from typing import TYPE_CHECKING

from prefeval_core.lazy import lazy_package

if TYPE_CHECKING:  # the package's names, imported on first use (`X as X`: re-exported)
    from prefeval_core.workflow.setup import Mode as Mode
    from prefeval_core.workflow.setup import StudySetup as StudySetup
    from prefeval_core.workflow.setup import protocol_settings as protocol_settings
    from prefeval_core.workflow.study import Replay as Replay
    from prefeval_core.workflow.study import replay_json as replay_json
    from prefeval_core.workflow.study import run_replay as run_replay
    from prefeval_core.workflow.study import start_study as start_study
    from prefeval_core.workflow.study import study_table as study_table
    from prefeval_core.workflow.study import summary_json as summary_json

__getattr__, __all__ = lazy_package(__name__, __file__)
