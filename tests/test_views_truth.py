"""Views that never contradict the method: each plot draws the boundaries its decisions used."""

from __future__ import annotations

import pytest

import prefeval_core.api as pe
from prefeval_core.outcomes import BETTER, TIE, WORSE
from prefeval_core.workflow.views import CONTROL_WORDS, decision_paths, theta_history_figure


@pytest.mark.parametrize("control", ["none", "spending", "anytime"])
def test_a_pair_beyond_its_line_is_decided_under_each_error_control(control: str) -> None:
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", error_control=control, futility=None, budget=900)
    state = run.run.state
    found = decision_paths(state)
    assert found.paths and found.lower < found.upper
    decided = 0
    for pair, path in found.paths.items():
        *before, (_, last) = path
        assert all(found.lower < y < found.upper for _, y in before), pair  # a decision is made once, at the last look
        expected = BETTER if last >= found.upper else WORSE if last <= found.lower else TIE
        assert int(state.decisions[pair]) == expected, (pair, path)
        decided += expected != TIE
    assert decided > 0
    figure = theta_history_figure(state)
    assert CONTROL_WORDS[control] in figure.layout.title.text
    assert sorted(shape.y0 for shape in figure.layout.shapes) == [found.lower, found.upper]
