"""``prefeval labelstudio push|pull`` against a real Label Studio server (1.23.2, installed into
``.venv-labelstudio`` by ``scripts/label-studio-server.sh``, which ``scripts/run-tests.sh`` runs;
one server per test session on 127.0.0.1, data in a temp folder, no outside calls).

The lead pushes a round, two annotators who signed up through the project's invite link answer
tasks through the API with their own tokens, the lead pulls: every answer is stored once, with the
side each annotator saw and the annotator's e-mail; the lead steps part-way, and the next push
adds only the new tasks (the open ones stay single tasks). A second annotator's labeling screen,
rendered in Chromium, shows the texts and the criterion and nothing of the first one's. Under
``CI=true`` a missing server, SDK or browser fails the test; elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from prefeval_core.cli import main
from prefeval_core.store import open_store
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.studies import begin_study

ROOT = Path(__file__).resolve().parents[1]
LABEL_STUDIO = ROOT / ".venv-labelstudio" / "bin" / "label-studio"
INSTALL = "bash scripts/label-studio-server.sh"
LEAD = ("lead@example.org", "lead-password-1", "lead-token-0123456789")
START_SECONDS = 300  # a first start migrates a new database: 35 s alone, longer on a busy machine
SYSTEMS = ("good", "middle", "poor")  # the annotators judge by the texts ("good answer 7"), never by a name


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI needs the Label Studio server test)")
    pytest.skip(reason)


@dataclass(frozen=True)
class Server:
    """A running Label Studio: its address and the lead's (the first user's) API token."""

    url: str
    token: str

    def get(self, path: str, token: str | None = None) -> Any:
        response = requests.get(self.url + path, headers={"Authorization": f"Token {token or self.token}"}, timeout=60)
        response.raise_for_status()
        return response.json()

    def annotator(self, email: str) -> str:
        """Sign ``email`` up through the organisation's invite link, as a new annotator would; their API token."""
        invite = self.get("/api/invite")
        session = requests.Session()
        session.get(self.url + invite["invite_url"], timeout=60).raise_for_status()
        form = {"email": email, "password": "annotator-password-1", "csrfmiddlewaretoken": session.cookies["csrftoken"]}
        signup = session.post(
            f"{self.url}/user/signup/?token={invite['token']}", data=form, headers={"Referer": self.url + invite["invite_url"]}, timeout=60
        )
        signup.raise_for_status()
        return session.get(self.url + "/api/current-user/token", timeout=60).json()["token"]

    def answer(self, token: str, task: dict[str, Any], label: str) -> None:
        """One annotation of a comparison task by the user of ``token``, as the labeling screen sends it."""
        result = [{"from_name": "preference", "to_name": "output_a", "type": "choices", "value": {"choices": [label]}}]
        response = requests.post(
            f"{self.url}/api/tasks/{task['id']}/annotations/",
            json={"result": result},
            headers={"Authorization": f"Token {token}"},
            timeout=60,
        )
        response.raise_for_status()

    def tasks(self, project: int) -> list[dict[str, Any]]:
        return self.get(f"/api/projects/{project}/export?exportType=JSON&download_all_tasks=true")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    try:
        import label_studio_sdk  # noqa: F401
    except ImportError:
        _unavailable("label-studio-sdk is not installed (pip install '.[labelstudio]')")
    if not LABEL_STUDIO.exists():
        _unavailable(f"no Label Studio server in .venv-labelstudio (run `{INSTALL}`)")
    folder = tmp_path_factory.mktemp("label-studio")
    port = _free_port()
    quiet = {"SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": "", "LATEST_VERSION_CHECK": "false", "COLLECT_ANALYTICS": "false"}
    command = [
        str(LABEL_STUDIO), "start", "--internal-host", "127.0.0.1", "-p", str(port), "--data-dir", str(folder / "data"),
        "--username", LEAD[0], "--password", LEAD[1], "--user-token", LEAD[2], "--enable-legacy-api-token", "--no-browser",
    ]  # fmt: skip
    log = (folder / "server.log").open("wb")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")} | quiet  # its own venv's packages only
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if server.poll() is not None:
                pytest.fail(f"Label Studio stopped at start:\n{(folder / 'server.log').read_text(errors='replace')[-3000:]}")
            try:
                if requests.get(url + "/health", timeout=5).ok:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Label Studio did not answer within {START_SECONDS} s")
            time.sleep(1)
        yield Server(url, LEAD[2])
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def _data(items: int = 12) -> DataChoice:
    texts = "".join(f"i{k:02d},{s},{s} answer {k}\n" for k in range(items) for s in SYSTEMS)
    sources = "".join(f"i{k:02d},the document of item {k}\n" for k in range(items))
    ratings = "".join(f"i{k:02d},{s},human,{3 + (s == 'good') - (s == 'poor')}\n" for k in range(3) for s in SYSTEMS)
    files = (
        ("texts.csv", ("item_id,system,output\n" + texts).encode()),
        ("sources.csv", ("item_id,source\n" + sources).encode()),
        ("ratings.csv", ("item_id,system,rater,score\n" + ratings).encode()),
    )
    return DataChoice("upload", "labelstudio-server", files)


def _better(task: dict[str, Any]) -> str:
    """What an annotator who prefers the better system (by its text) answers."""
    shown = [task["data"][key].split()[0] for key in ("prefeval_output_a", "prefeval_output_b")]
    return "A better" if SYSTEMS.index(shown[0]) < SYSTEMS.index(shown[1]) else "B better"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_push_answer_as_two_users_pull_and_push_the_next_round(
    label_studio: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    store = open_store(tmp_path)
    data = _data()
    setup = StudySetup(human="human", unit="comparisons", mode="live", budget=200, batch=2)
    study = begin_study(store, data, data.load(), setup, criterion="relevance").id
    server = ["--url", label_studio.url]

    pushed = _cli(capsys, "labelstudio", "push", str(study), *server)
    assert (pushed["created"], pushed["added"], pushed["already_had"]) == (True, 6, 0)
    project = label_studio.get(f"/api/projects/{pushed['project']}")
    assert "$source" not in project["label_config"] and "Which output is better in relevance?" in project["label_config"]
    assert "relevance" in project["expert_instruction"]
    tasks = label_studio.tasks(pushed["project"])
    assert len(tasks) == 6
    for task in tasks:  # only prefeval's keys: texts and the blind token, no system name, nobody's answers
        assert set(task["data"]) == {"prefeval_source", "prefeval_output_a", "prefeval_output_b", "prefeval"}
        assert task["data"]["prefeval_source"].startswith("the document of item")
        assert not any(system in json.dumps(task["data"]["prefeval"]) for system in SYSTEMS)

    ann, bob = label_studio.annotator("ann@example.org"), label_studio.annotator("bob@example.org")
    for task in tasks[:4]:
        label_studio.answer(ann, task, _better(task))
    label_studio.answer(bob, tasks[0], "Equal")  # bob sees one differently
    label_studio.answer(bob, tasks[1], _better(tasks[1]))

    pulled = _cli(capsys, "labelstudio", "pull", str(study), *server)
    assert (pulled["tasks"], pulled["judgments"], pulled["added"], pulled["unanswered"]) == (6, 6, 6, 2)
    stored = store.comparisons(data.key, study_id=study)
    assert sorted(j.annotator for j in stored) == ["ann@example.org"] * 4 + ["bob@example.org"] * 2
    # the canonical pairs put the better system first: '>' (0) unless the annotator said Equal (1)
    assert sorted(j.outcome for j in stored) == [0, 0, 0, 0, 0, 1]
    assert all(j.origin == "import" and j.left_system in (j.system_a, j.system_b) for j in stored)
    again = _cli(capsys, "labelstudio", "pull", str(study), *server)
    assert (again["added"], again["already_there"]) == (0, 6)

    stepped = _cli(capsys, "studies", "step", str(study))
    assert stepped["round"] == 1 and stepped["cost_used"] == 6  # every judgment is paid for: 4 + 2
    second = _cli(capsys, "labelstudio", "push", str(study), *server)
    assert second["created"] is False and second["project"] == pushed["project"]
    assert second["already_had"] == 2 and second["added"] == stepped["requested"] - 2
    after = label_studio.tasks(pushed["project"])
    tokens = [task["data"]["prefeval"]["request_id"] for task in after]
    assert len(after) == 6 + second["added"] and len(set(tokens)) == len(tokens)
    items_and_texts = [
        (t["data"]["prefeval"]["item_id"], *sorted((t["data"]["prefeval_output_a"], t["data"]["prefeval_output_b"]))) for t in after
    ]
    assert len(set(items_and_texts)) == len(after)  # no request twice, whichever side it shows as A
    store.dispose()


def test_the_labeling_screen_shows_the_texts_and_the_criterion_and_nobody_elses_data(
    label_studio: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Annotator A answers a task through the API; annotator B logs in on Label Studio's own login
    page in Chromium and opens the labeling screen (the project's label stream, which serves B the
    task A answered: the lead asked for two answers per task). The source text, the criterion and
    both outputs show; nothing of A's (e-mail, answer) and none of the task's JSON does."""
    from ui.browser import CHROMIUM, launch_chromium

    if not CHROMIUM.exists():
        _unavailable(f"no chromium at {CHROMIUM}")
    from playwright.sync_api import expect, sync_playwright

    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    store = open_store(tmp_path)
    data = _data(items=3)
    setup = StudySetup(human="human", unit="comparisons", mode="live", budget=50, batch=2)
    study = begin_study(store, data, data.load(), setup, criterion="coherence").id
    store.dispose()
    project = _cli(capsys, "labelstudio", "push", str(study), "--url", label_studio.url)["project"]
    overlap = requests.patch(  # two answers per task, so the stream serves B the task A answered
        f"{label_studio.url}/api/projects/{project}", json={"maximum_annotations": 2},
        headers={"Authorization": f"Token {label_studio.token}"}, timeout=60,
    )  # fmt: skip
    overlap.raise_for_status()
    task = min(label_studio.tasks(project), key=lambda t: t["id"])  # the first the stream serves
    a_email, b_email = "first-annotator@example.org", "second-annotator@example.org"
    label_studio.answer(label_studio.annotator(a_email), task, "B better")
    label_studio.annotator(b_email)

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(120_000)
        expect.set_options(timeout=120_000)
        page.goto(f"{label_studio.url}/user/login/")
        page.locator('input[name="email"]').fill(b_email)
        page.locator('input[name="password"]').fill("annotator-password-1")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(f"{label_studio.url}/")
        page.goto(f"{label_studio.url}/projects/{project}/data?labeling=1")
        data_shown = task["data"]
        expect(page.get_by_text("Which output is better in coherence?")).to_be_visible()
        for text in (data_shown["prefeval_source"], data_shown["prefeval_output_a"], data_shown["prefeval_output_b"]):
            expect(page.get_by_text(text, exact=True)).to_be_visible()
        choices = page.locator('input[type="radio"]')
        expect(choices).to_have_count(4)  # A better, Equal, B better, Both bad
        shown, html = page.locator("body").inner_text(), page.content()
        sides = f"Output A\n{data_shown['prefeval_output_a']}\nOutput B\n{data_shown['prefeval_output_b']}\n"
        assert sides in shown, shown  # the very task A answered, with the sides A saw
        assert [choices.nth(k).is_checked() for k in range(4)] == [False] * 4  # A's "B better" is not B's
        assert a_email not in html and b_email in html  # B's own menu names B; nothing names A
        assert data_shown["prefeval"]["request_id"] not in html, "the task's JSON is in the page"
        assert "prefeval_" not in shown and "{" not in shown, shown
        browser.close()
