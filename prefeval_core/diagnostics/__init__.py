"""Metric diagnostics against a full human evaluation (method.md §7, §8, §9).

* :mod:`~prefeval_core.diagnostics.confusion`: the 3x3 confusion matrix of every pair
  (rows = metric, columns = human, order ``>``, ``=``, ``<``) and the mixture matrix;
* :mod:`~prefeval_core.diagnostics.favi`: the Favi-Score (von Däniken et al. 2024), its
  posterior, and the per-system view;
* :mod:`~prefeval_core.diagnostics.sign_accuracy`: sample- and system-level sign accuracy;
* :mod:`~prefeval_core.diagnostics.significance`: the human, naive-metric and protocol
  significance DAGs;
* :mod:`~prefeval_core.diagnostics.metric_report`: everything for one metric at once.
"""
