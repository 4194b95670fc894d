"""The dashboard in a real browser (Playwright + Debian chromium), beyond the end-to-end run:

- the navigation is always the app's own, also when a tab's first request names a page;
- no page makes a request outside the app, with hostile file, output and annotator names, which
  show as written;
- the annotator's name survives a reload, a new tab and moving between pages; typing it fires no
  keyboard shortcut;
- the Metric check figures lay out without overlaps at 1280 and 1440 px.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser_steps import rate_with_key
from tests.test_browser_e2e import RATINGS, SYSTEMS
from ui.browser import CHROMIUM, launch_chromium, served_app

TIMEOUT_MS = 120_000  # the first run of a fresh server imports the whole stack

pytestmark = [
    pytest.mark.browser,
    # CI installs chromium (scripts/run-tests.sh): there a missing browser must fail, not skip.
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium"),
]

APP_PAGES = ("Data", "Metric check", "Protocol", "Annotate", "Report & session")
NAV_LINKS = '[data-testid="stTopNavLink"], [data-testid="stSidebarNavLink"]'
MAIN = '[data-testid="stMain"]'

OUTSIDE = "203.0.113.9"  # TEST-NET-3: never routed; requests to it are aborted here anyway
HOSTILE_FILE = f"![x](http://{OUTSIDE}/f.png).csv"
HOSTILE_TEXTS_FILE = "![t](http://127.0.0.1:9/t.png).csv"  # same host, another port: still not the app
HOSTILE_NAME = f"Bea ![y](http://{OUTSIDE}/n.png) <img src=http://{OUTSIDE}/i.png>"
HOSTILE_SYSTEM = f"![s](http://{OUTSIDE}/s.png)"
HOSTILE_METRIC = f"<img src=http://{OUTSIDE}/m.png>"
HOSTILE_RATINGS = RATINGS.replace(",beta,", f",{HOSTILE_SYSTEM},").replace(",bleu,", f",{HOSTILE_METRIC},")
TEXTS = "item_id,system,output\n" + "".join(
    f"i{i},{s},![o](http://{OUTSIDE}/o{i}.png) {s} <img src=http://{OUTSIDE}/p.png>\n"
    for i in range(12)
    for s in (SYSTEMS[0], HOSTILE_SYSTEM, SYSTEMS[2])
)

OVERLAPS = """(root) => {
  // Every text of a plotly chart as the quadrilateral it covers on screen (rotated tick labels too).
  const quad = (el) => {
    const b = el.getBBox(), m = el.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };
  const box = (r) => [[r.left, r.top], [r.right, r.top], [r.right, r.bottom], [r.left, r.bottom]];
  // Separating-axis test for two convex quadrilaterals; touching within 1 px is not an overlap.
  const apart = (p, q) => [p, q].some((poly) => poly.some((a, i) => {
    const b = poly[(i + 1) % 4], n = [a[1] - b[1], b[0] - a[0]], len = Math.hypot(n[0], n[1]) || 1;
    const along = (pts) => pts.map(([x, y]) => (x * n[0] + y * n[1]) / len);
    const s = along(p), t = along(q);
    return Math.min(Math.max(...s), Math.max(...t)) - Math.max(Math.min(...s), Math.min(...t)) <= 1;
  }));
  const texts = [];
  const add = (role, elements) => elements.forEach((el) => {
    const b = el.getBBox();
    if (b.width > 0.5 && b.height > 0.5 && el.textContent.trim()) texts.push({ role, text: el.textContent.trim(), q: quad(el) });
  });
  const groups = (pattern) => [...root.querySelectorAll("g")].filter((g) => pattern.test(g.getAttribute("class") || ""));
  add("title", [...root.querySelectorAll(".g-gtitle text")]);
  add("axis title", groups(/^g-[xy][0-9]*title$/).flatMap((g) => [...g.querySelectorAll("text")]));
  add("annotation", [...root.querySelectorAll(".annotation-text")]);
  add("legend", [...root.querySelectorAll(".legend .legendtext")]);
  add("tick", [...root.querySelectorAll(".xaxislayer-above text, .yaxislayer-above text")]);
  add("bar label", [...root.querySelectorAll(".bartext")]);
  const areas = [...root.querySelectorAll(".nsewdrag")].map((el) => box(el.getBoundingClientRect()));
  const frame = root.getBoundingClientRect();
  const problems = [];
  for (const t of texts) {
    const xs = t.q.map((p) => p[0]), ys = t.q.map((p) => p[1]);
    const inside = Math.min(...xs) >= frame.left - 1 && Math.max(...xs) <= frame.right + 1
      && Math.min(...ys) >= frame.top - 1 && Math.max(...ys) <= frame.bottom + 1;
    if (!inside) {
      problems.push(`${t.role} "${t.text}" is cut off at the figure's edge`);
    }
    if (["title", "axis title", "legend"].includes(t.role) && areas.some((a) => !apart(t.q, a))) {
      problems.push(`${t.role} "${t.text}" lies over a plot area`);
    }
  }
  texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
    if (!apart(a.q, b.q)) problems.push(`${a.role} "${a.text}" overlaps ${b.role} "${b.text}"`);
  }));
  const roles = [...new Set(texts.map((t) => t.role))].sort();
  return { problems, roles };
}"""


@pytest.fixture
def fresh_app(tmp_path: Path) -> Iterator[str]:
    """A server of its own: Streamlit's legacy page mode is decided per process."""
    with served_app(tmp_path / "streamlit.log", {"PREFEVAL_DATA_DIR": str(tmp_path / "store")}) as url:
        yield url


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("browser_ui")
    with served_app(folder / "streamlit.log", {"PREFEVAL_DATA_DIR": str(folder / "store")}) as url:
        yield url


@contextmanager
def browser(app_url: str, width: int = 1280) -> Iterator[tuple[Any, list[str]]]:
    """A fresh browser profile; yields it and every network request its pages make (http and
    websocket). Requests outside the app's origin are recorded and aborted, so nothing leaves."""
    from playwright.sync_api import expect, sync_playwright

    requests: list[str] = []

    def route(route: Any) -> None:
        requests.append(route.request.url)
        if same_origin(route.request.url, app_url):
            route.continue_()
        else:
            route.abort()

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        context = chromium.new_context(viewport={"width": width, "height": 1000})
        context.set_default_timeout(TIMEOUT_MS)
        expect.set_options(timeout=TIMEOUT_MS)
        context.route("**/*", route)
        context.on("page", lambda page: page.on("websocket", lambda socket: requests.append(socket.url)))
        try:
            yield context, requests
        finally:
            chromium.close()


def same_origin(url: str, app_url: str) -> bool:
    """Whether a network request goes to the app itself (``data:`` and ``blob:`` URLs are no requests)."""
    if not re.match(r"(https?|wss?)://", url):
        return True
    origin = app_url.split("://", 1)[1]
    return re.sub(r"^[a-z]+://", "", url).split("/", 1)[0] == origin


def expect_the_apps_navigation(page: Any, title: str) -> None:
    """The page shows ``title``, the app's five pages as navigation and the app's favicon (set by app.py)."""
    from playwright.sync_api import expect

    expect(page.locator(MAIN).locator("h1")).to_contain_text(title)
    expect(page.locator(NAV_LINKS)).to_have_text([re.compile(rf"{re.escape(p)}$") for p in APP_PAGES])
    expect(page.locator("link[rel='shortcut icon']")).to_have_attribute("href", re.compile(r"^data:image/svg\+xml"))


def open_tabs(page: Any, charts: dict[str, int]) -> None:
    """Open each tab (only the open one is drawn) and wait for its number of charts."""
    for tab, count in charts.items():
        page.get_by_role("tab", name=tab).click()
        page.wait_for_function(
            f"() => [...document.querySelectorAll('[role=tabpanel]')].some("
            f"(panel) => panel.offsetParent && panel.querySelectorAll('.js-plotly-plot .nsewdrag').length >= {count})"
        )


def test_a_tab_whose_first_request_names_a_page_gets_the_apps_navigation(fresh_app: str) -> None:
    """Before the fix the server's first run took Streamlit's legacy ``pages/`` mode: the sidebar
    listed "app, annotate, data, ..." and the page ran without app.py, also after a reload."""
    with browser(fresh_app) as (context, _):
        page = context.new_page()
        page.goto(f"{fresh_app}/annotate")
        expect_the_apps_navigation(page, "Annotate")
        page.reload()
        expect_the_apps_navigation(page, "Annotate")
        other = context.new_page()
        other.goto(f"{fresh_app}/protocol")
        expect_the_apps_navigation(other, "Protocol")
        other.get_by_role("link", name="Metric check").click()
        expect_the_apps_navigation(other, "Metric check")


@pytest.mark.parametrize("width", [1280, 1440])
def test_metric_check_figures_have_no_overlapping_text(app_url: str, width: int) -> None:
    with browser(app_url, width) as (context, _):
        page = context.new_page()
        page.goto(f"{app_url}/metric_check")
        charts = page.locator(MAIN).locator(".js-plotly-plot")
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .nsewdrag').length >= 4")  # 2 + 1 + 1 plot areas
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
        page.wait_for_timeout(1000)  # plotly's last relayout after the fonts load
        results = [chart.evaluate(OVERLAPS) for chart in charts.all()]
    assert len(results) == 3  # sign accuracy, Kendall tau, Favi box plot
    assert [r["problems"] for r in results] == [[], [], []]
    assert {"title", "axis title", "tick", "legend", "bar label"} <= set(results[0]["roles"])  # the check saw the texts


def test_no_page_requests_anything_outside_the_app_with_hostile_names(app_url: str) -> None:
    from playwright.sync_api import expect

    with browser(app_url) as (context, requests):
        page = context.new_page()
        main = page.locator(MAIN)
        page.goto(app_url)
        expect(main.get_by_text("Loaded summeval")).to_be_visible()

        # Data: two files with Markdown images as names, outputs with images and HTML.
        page.get_by_text("Your files", exact=True).click()
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
            [
                {"name": HOSTILE_FILE, "mimeType": "text/csv", "buffer": HOSTILE_RATINGS.encode()},
                {"name": HOSTILE_TEXTS_FILE, "mimeType": "text/csv", "buffer": TEXTS.encode()},
            ]
        )
        expect(main.get_by_text(f"Loaded {HOSTILE_FILE} + 1 more: 3 systems, 12 items, 2 raters.")).to_be_visible()
        page.get_by_text("Column mapping (only if a file was misread)").click()
        expect(main.get_by_text(f"{HOSTILE_FILE}: holds", exact=True)).to_be_visible()
        expect(main.get_by_text(f"{HOSTILE_TEXTS_FILE}: rater columns", exact=False)).to_be_visible()

        expect(main.get_by_text(f"Systems: {HOSTILE_SYSTEM}, alpha, gamma")).to_be_visible()

        page.get_by_role("link", name="Metric check").click()
        expect(main.get_by_text(f"{HOSTILE_METRIC} agrees with human", exact=False)).to_be_visible()
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .nsewdrag').length >= 4")
        open_tabs(page, {"Confusion of a pair": 1, "Significance DAGs": 2})

        page.get_by_role("link", name="Protocol").click()
        page.get_by_role("spinbutton", name="Budget (judgments; 0 = all the data holds)").fill("24")
        page.get_by_role("spinbutton", name="Batch N per round").fill("2")
        page.get_by_role("combobox", name="A paid judgment is").click()
        page.get_by_role("option", name="comparisons of two outputs").click()
        page.get_by_role("button", name="Start protocol").click()
        page.get_by_role("button", name="Next batch").click()
        expect(main.locator('[data-testid="stMetric"]').filter(has_text="Round")).to_contain_text("1")
        open_tabs(page, {"Decisions across rounds": 1, "Win rates": 2, "Decided so far": 1})

        # Annotate, in a live study of the same settings (a replay asks nothing): a hostile annotator name, one annotation by key.
        main.locator('[data-testid="stExpander"] summary').filter(has_text="Settings").click()  # folded once a run started
        page.get_by_text("Live: people judge what the protocol asks for").click()
        page.get_by_role("spinbutton", name="Budget (judgments; 0 = all the data holds)").fill("24")
        page.get_by_role("button", name="Start protocol").click()
        expect(main.locator('[data-testid="stMetric"]').filter(has_text="Comparisons used")).to_contain_text("0")
        page.get_by_role("link", name="Annotate").click()
        expect(main.get_by_text("Output A")).to_be_visible()
        expect(main.get_by_text(f"http://{OUTSIDE}/o", exact=False).first).to_be_visible()  # outputs shown as text
        page.get_by_role("textbox", name="Annotator name").fill(HOSTILE_NAME)
        page.get_by_role("textbox", name="Annotator name").press("Enter")
        progress = main.locator('[data-testid="stProgress"]')
        expect(progress).to_contain_text(re.compile(rf"0 of \d+ judged by {re.escape(HOSTILE_NAME)}"))
        rate_with_key(page, main, progress, "a", 1)  # waits for the key bindings, presses again if the key was dropped
        expect(progress).to_contain_text(re.compile(rf"1 of \d+ judged by {re.escape(HOSTILE_NAME)}"))

        page.get_by_role("link", name="Report & session").click()
        expect(main.get_by_text("Save session (JSON)")).to_be_visible()
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
        assert page.locator(f"img[src*='{OUTSIDE}'], img[src*='127.0.0.1:9']").count() == 0

    assert any(same_origin(url, app_url) and url.startswith("ws") for url in requests)  # the recording works
    assert [url for url in requests if not same_origin(url, app_url)] == []


def test_the_leads_annotator_name_stays_in_the_session_and_out_of_the_address(app_url: str) -> None:
    from playwright.sync_api import expect

    name = "Abe Bea"  # a, b and e are the annotation shortcuts: typing them must not annotate
    with browser(app_url) as (context, _):
        page = context.new_page()
        page.goto(f"{app_url}/annotate?annotator=mallory")  # an address naming someone gives nobody an identity
        name_field = page.get_by_role("textbox", name="Annotator name")
        progress = page.locator(MAIN).locator('[data-testid="stProgress"]')
        expect(progress).to_contain_text("0 of 100 judged by lead")
        name_field.press_sequentially(name)
        name_field.press("Enter")
        expect(progress).to_contain_text(f"0 of 100 judged by {name}")
        expect(page).not_to_have_url(re.compile("Abe"))

        page.get_by_role("link", name="Protocol").click()
        expect(page.locator(MAIN).locator("h1")).to_contain_text("Protocol")
        page.get_by_role("link", name="Annotate").click()
        expect(page.get_by_role("textbox", name="Annotator name")).to_have_value(name)  # kept for the session
        expect(progress).to_contain_text(f"0 of 100 judged by {name}")  # no key typed above annotated anything

        page.reload()  # a new session: the lead names themself again
        expect(page.get_by_role("textbox", name="Annotator name")).to_have_value("")
        expect(progress).to_contain_text("0 of 100 judged by lead")
