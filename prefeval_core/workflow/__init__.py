"""The application layer: what the CLI and the dashboard both call (one path, one set of numbers).

* :mod:`~prefeval_core.workflow.setup`: :class:`StudySetup`, the one typed description of a study;
* :mod:`~prefeval_core.workflow.study`: dataset + setup -> study table -> protocol run -> summary
  (the stable JSON shapes);
* :mod:`~prefeval_core.workflow.papers`: the papers' tables (naive metric, averages over seeds).
"""

from prefeval_core.workflow.setup import Mode, StudySetup, protocol_settings
from prefeval_core.workflow.study import Replay, replay_json, run_replay, start_study, study_table, summary_json

__all__ = ["Mode", "Replay", "StudySetup", "protocol_settings", "replay_json", "run_replay", "start_study", "study_table", "summary_json"]
