"""Driving the dashboard in a real browser (the end-to-end test and the screenshot script):
serve ``app.py`` on a free local port, and launch Debian's chromium through Playwright offline."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ("--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def served_app(
    log_path: Path,
    env: Mapping[str, str] | None = None,
    *,
    start_timeout: float = 60.0,
    server: Sequence[str] = (sys.executable, "-m", "streamlit", "run", "app.py"),
    cwd: Path = ROOT,
) -> Iterator[str]:
    """``streamlit run app.py`` (or another ``server`` command taking Streamlit's options, e.g. an
    installed ``prefeval app``, run in ``cwd``) on 127.0.0.1 and a free port; yields the URL once
    ``/_stcore/health`` answers ``ok``; stops the server on exit. Server output goes to ``log_path``."""
    port = free_port()
    command = [*server, "--server.port", str(port), "--server.address", "127.0.0.1"]
    command += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    with log_path.open("w") as log:
        process = subprocess.Popen(command, cwd=cwd, env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + start_timeout
            while not _healthy(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start:\n{log_path.read_text()}")
                time.sleep(0.3)
            yield url
        finally:
            stop_process(process)


def stop_process(process: subprocess.Popen[bytes], grace: float = 20.0) -> None:
    """Stop a server: SIGTERM, then SIGKILL if it has not exited within ``grace`` seconds (a
    Streamlit server with an open browser session can take longer than that on a loaded machine)."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=grace)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return bool(response.read() == b"ok")
    except OSError:
        return False


def launch_chromium(playwright: Any) -> Any:
    """Headless Debian chromium (never Playwright's own download, which needs the internet)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS))
