"""The application layer: what the CLI and the dashboard both call (one path, one set of numbers).

* :mod:`~prefeval_core.workflow.setup`: :class:`StudySetup`, the one typed description of a study;
* :mod:`~prefeval_core.workflow.study`: dataset + setup -> study table -> protocol run -> summary
  (the stable JSON shapes);
* :mod:`~prefeval_core.workflow.papers`: the papers' tables (naive metric, averages over seeds).

The names below are imported on first use, so that importing one light module of the layer
(``prefeval app`` needs only :mod:`~prefeval_core.workflow.dashboard`) does not load the protocol.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the lazily imported names, for type checkers (`X as X`: re-exported)
    from prefeval_core.workflow.setup import Mode as Mode
    from prefeval_core.workflow.setup import StudySetup as StudySetup
    from prefeval_core.workflow.setup import protocol_settings as protocol_settings
    from prefeval_core.workflow.study import Replay as Replay
    from prefeval_core.workflow.study import replay_json as replay_json
    from prefeval_core.workflow.study import run_replay as run_replay
    from prefeval_core.workflow.study import start_study as start_study
    from prefeval_core.workflow.study import study_table as study_table
    from prefeval_core.workflow.study import summary_json as summary_json

_MODULES = {
    "Mode": "setup",
    "StudySetup": "setup",
    "protocol_settings": "setup",
    "Replay": "study",
    "replay_json": "study",
    "run_replay": "study",
    "start_study": "study",
    "study_table": "study",
    "summary_json": "study",
}
"""Each name of the package and the module (of this package) it lives in."""


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module 'prefeval_core.workflow' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


__all__ = ["Mode", "Replay", "StudySetup", "protocol_settings", "replay_json", "run_replay", "start_study", "study_table", "summary_json"]
