"""Pairwise outcomes and their counts (method.md §1–§3): from scores to ``>``, ``=``, ``<`` per item
and canonical pair, the metric-by-human count tables (rows = metric, columns = human), and the
summary of what a dataset covers per pair."""
