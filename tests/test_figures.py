"""Every figure built from real data, its data checked; the HTML report opens offline."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from prefeval_core.data.dataset import load_dataset
from prefeval_core.diagnostics.confusion import mixture_matrix
from prefeval_core.diagnostics.metric_report import MetricReport, metric_report
from prefeval_core.diagnostics.win_rate import win_rate_densities
from prefeval_core.figures.confusion import confusion_heatmap
from prefeval_core.figures.dag import EDGE_HOVER_TRACE, dag_figure
from prefeval_core.figures.favi import favi_box_plot
from prefeval_core.figures.metrics import kendall_tau_bars, sign_accuracy_bars
from prefeval_core.figures.posterior import win_rate_figure, win_rate_ridge
from prefeval_core.figures.report import diagnostics_html, write_diagnostics_html


@pytest.fixture(scope="module")
def rouge(summeval) -> MetricReport:
    return metric_report(summeval, "human:relevance", "rougeL", samples=500)


@pytest.fixture(scope="module")
def gpt4(summeval) -> MetricReport:
    return metric_report(summeval, "human:relevance", "gpt-4-0314-rts:relevance", samples=500)


@pytest.fixture(scope="module")
def pandalm(shared_data: Path) -> MetricReport:
    return metric_report(load_dataset(shared_data / "pandalm"), "human", "pandalm-7b", samples=500)


def assert_titled(figure) -> None:
    assert figure.layout.title.text


def test_confusion_heatmap_shows_the_matrix(pandalm: MetricReport) -> None:
    index = 1
    a, b = pandalm.pairs[index]
    K = pandalm.confusions.K[index]
    figure = confusion_heatmap(K, a, b, metric=pandalm.metric, human=pandalm.human)
    np.testing.assert_array_equal(np.array(figure.data[0].z), K)
    np.testing.assert_array_equal(np.array(figure.data[1].z, dtype=float), mixture_matrix(K))
    assert list(figure.data[0].x) == [f"{a} better (>)", "no preference (=)", f"{b} better (<)"]
    assert figure.layout.xaxis.title.text == "human (outcome)" and figure.layout.yaxis.title.text == "pandalm-7b (outcome)"
    assert f"{a} vs {b}" in figure.data[0].hovertemplate and "items" in figure.data[0].hovertemplate
    assert f"{int(K.sum())} items" in figure.layout.title.text


def test_favi_box_plot_holds_every_oriented_score(rouge: MetricReport) -> None:
    figure = favi_box_plot(rouge.systems, metric=rouge.metric, human=rouge.human)
    assert_titled(figure)
    assert {t.name for t in figure.data} == set(rouge.systems)
    for trace in figure.data:
        entry = rouge.systems[trace.name]
        np.testing.assert_allclose(trace.y, entry.scores)
        assert trace.x[0] == f"{entry.system}<br>n={len(entry.scores)}"
        assert [row[0] for row in trace.customdata] == list(entry.opponents)
    medians = [np.median(t.y) for t in figure.data]
    assert medians == sorted(medians, reverse=True)
    assert any(shape.y0 == 0 and shape.y1 == 0 for shape in figure.layout.shapes)  # the zero line
    assert "Favi-Score" in figure.layout.yaxis.title.text


def test_sign_accuracy_bars(rouge: MetricReport, gpt4: MetricReport, pandalm: MetricReport) -> None:
    reports = [rouge, gpt4]
    figure = sign_accuracy_bars(reports)
    assert list(figure.data[0].x) == ["rougeL", "gpt-4-0314-rts:relevance"]
    np.testing.assert_allclose(figure.data[0].y, [r.sign.sample for r in reports])
    np.testing.assert_allclose(figure.data[1].y, [r.sign.system for r in reports])
    np.testing.assert_allclose(figure.data[2].y, [r.mean_abs_favi for r in reports])
    np.testing.assert_allclose(figure.data[2].error_y.array, [r.std_abs_favi for r in reports])
    assert figure.layout.yaxis.title.text == "accuracy (fraction)"
    single = sign_accuracy_bars([pandalm])
    assert single.data[0].y[0] == pytest.approx(pandalm.sign.sample)


def test_kendall_tau_bars(rouge: MetricReport, gpt4: MetricReport) -> None:
    results = [rouge.kendall, gpt4.kendall]
    assert all(r is not None for r in results)
    figure = kendall_tau_bars(results)  # type: ignore[arg-type]
    np.testing.assert_allclose(figure.data[0].y, [r.tau for r in results])  # type: ignore[union-attr]
    np.testing.assert_allclose(figure.data[1].y, [r.tau_grouped for r in results])  # type: ignore[union-attr]
    assert list(figure.data[0].customdata) == [1600, 1200]  # segments: 16 and 12 systems x 100 documents
    assert "Kendall tau-b" in figure.layout.yaxis.title.text


@pytest.mark.parametrize("which", ["human", "metric"])
def test_dag_figure_on_real_data(gpt4: MetricReport, which: str) -> None:
    order = getattr(gpt4.dags, which)
    figure = dag_figure(order, title=f"{which} DAG", reference=gpt4.dags.human)
    hover = next(t for t in figure.data if t.name == EDGE_HOVER_TRACE)
    assert {(r[0], r[1]) for r in hover.customdata} == set(order.hasse.edges)
    assert {r[2] for r in hover.customdata} == {d["error_type"] for _, _, d in order.hasse.edges(data=True)}
    nodes = next(t for t in figure.data if t.name == "systems")
    assert {h.split("<br>")[0] for h in nodes.hovertext} == set(order.graph.nodes)
    assert figure.layout.yaxis.title.text == "rank layer (0 = best)"


def test_win_rate_figure_from_exact_dirichlet_and_from_samples(rouge: MetricReport) -> None:
    n = rouge.confusions.human_all[0]
    a, b = rouge.pairs[0]
    densities = win_rate_densities(alpha=n + 1, seed=0)
    figure = win_rate_figure(densities, a, b, counts=n.tolist())
    for k in range(3):
        np.testing.assert_allclose(figure.data[k].y, densities.rate_density[k])
    np.testing.assert_allclose(figure.data[3].y, densities.difference_density)
    assert np.all(np.array(figure.data[4].x) > 0)
    assert f"{densities.theta:.3f}" in figure.data[4].name
    assert f"{a} vs {b}" in figure.layout.title.text and "exact Dirichlet" in figure.layout.title.text
    samples = np.random.default_rng(0).dirichlet(n + 1, size=5000)
    from_samples = win_rate_figure(win_rate_densities(samples=samples), a, b)
    assert "posterior samples" in from_samples.layout.title.text


def test_win_rate_ridge_has_one_row_per_pair(pandalm: MetricReport) -> None:
    densities = [win_rate_densities(alpha=n + 1, seed=i) for i, n in enumerate(pandalm.confusions.human_all)]
    figure = win_rate_ridge(pandalm.pairs, densities)
    assert [t.name for t in figure.data] == [f"{a} vs {b}" for a, b in pandalm.pairs]
    assert list(figure.layout.yaxis.ticktext) == [f"{a} vs {b}" for a, b in pandalm.pairs]
    top = figure.data[0]
    assert max(top.y) <= len(pandalm.pairs) - 1 + 0.9 + 1e-9 and min(top.y) == len(pandalm.pairs) - 1
    with pytest.raises(ValueError):
        win_rate_ridge(pandalm.pairs[:2], densities)


class _ExternalReferences(HTMLParser):
    """Collects src/href attributes of tags; script bodies (the inlined bundle) are not tags."""

    def __init__(self) -> None:
        super().__init__()
        self.references: list[tuple[str, str]] = []
        self.inline_scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.references.append((tag, value))
        if tag == "script" and not dict(attrs).get("src"):
            self.inline_scripts += 1


def test_html_report_is_self_contained(gpt4: MetricReport, tmp_path: Path) -> None:
    path = write_diagnostics_html(gpt4, tmp_path / "report.html", confusions_shown=2)
    text = path.read_text(encoding="utf-8")
    parser = _ExternalReferences()
    parser.feed(text)
    assert parser.references == []  # no <script src>, <link href>, <img src> at all
    assert "@import" not in text.split("<script", 1)[0]
    assert "cdn.plot.ly" not in "".join(v for _, v in parser.references)
    assert text.count("Plotly.newPlot") >= 8  # figures: summary (2), box, 2 DAGs, 2 posteriors, 2 confusions
    assert len(text) > 3_000_000  # the plotly.js bundle is inlined (about 4.6 MB)
    assert diagnostics_html(gpt4, confusions_shown=0).count("Plotly.newPlot") == text.count("Plotly.newPlot") - 2


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.browser
def test_html_report_renders_in_a_browser_without_network(pandalm: MetricReport, tmp_path: Path) -> None:
    """Open the report from disk with every non-file request blocked: all figures draw."""
    import os

    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI")
        pytest.skip("no /usr/bin/chromium on this machine")
    from playwright.sync_api import sync_playwright

    path = write_diagnostics_html(pandalm, tmp_path / "report.html", confusions_shown=2)
    expected = path.read_text(encoding="utf-8").count("Plotly.newPlot")
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
        )
        try:
            page = browser.new_page()

            def block(route) -> None:
                if route.request.url.startswith("file://"):
                    route.continue_()
                else:
                    outside.append(route.request.url)
                    route.abort()

            page.route("**/*", block)
            page.goto(path.as_uri())
            page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {expected}", timeout=60_000)
            assert page.evaluate("typeof window.Plotly") == "object"
            assert page.locator(".js-plotly-plot").count() == expected
        finally:
            browser.close()
    assert outside == []


def test_degenerate_inputs_still_draw(shared_data: Path) -> None:
    """A metric identical to the human (no error anywhere) and a DAG without edges."""
    from prefeval_core.diagnostics.partial_order import partial_order

    same = metric_report(load_dataset(shared_data / "pandalm"), "human", "human", samples=100)
    text = diagnostics_html(same, confusions_shown=1)
    assert "Favi-Score undefined (no error)" in text  # the confusion heatmap title
    empty = dag_figure(partial_order([("a", "b")], [1]))
    hover = next(t for t in empty.data if t.name == EDGE_HOVER_TRACE)
    assert len(hover.x) == 0
    boxes = favi_box_plot(same.systems)
    assert all(len(t.y) == 0 for t in boxes.data)
