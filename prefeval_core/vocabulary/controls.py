"""The names of the error-control rules (method.md §12, §13), declared apart from the rules
(:mod:`prefeval_core.protocol.error_controls`) so that listing them loads no engine."""

from __future__ import annotations

from typing import Literal

ErrorControl = Literal["none", "spending", "anytime", "question", "fdr"]
"""``none``: the paper's per-look rule (more false decisions the more often one looks);
``spending``: a spending function over the looks the pool allows (:mod:`prefeval_core.sequential.spending`);
``anytime``: e-processes, valid under any looking. Both keep at most ``gamma`` false decisions
**per pair** with ``p> = p<`` over the whole run. ``question``: the whole answer protected — at most
``gamma`` probability, over all looks and all pairs the question involves, of excluding a true
top-k member or of any false directional decision (:mod:`prefeval_core.protocol.question_control`).
``fdr``: all-pairs and baseline questions, the expected share of false directional decisions among
the decisions at most ``gamma`` (e-BH, :mod:`prefeval_core.protocol.fdr_control`)."""
