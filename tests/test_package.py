"""The installable package (issue 12 part 3): dependencies declared once, the wheel's contents, and
the wheel installed into a fresh virtualenv running ``prefeval --version``, ``prefeval replay``,
the README's Python example and the dashboard (``prefeval app``) — outside the clone.

The fresh-venv tests build the wheel with ``uv build`` and install it with ``uv pip install``,
constrained to the versions ``requirements.txt`` pins (uv links them from its cache, which
``scripts/setup-env.sh`` filled); under ``CI=true`` a missing ``uv`` fails them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import prefeval_core
from prefeval_core.cli import main
from prefeval_core.cli.app import MISSING_STREAMLIT
from prefeval_core.data.bundled import APP_DIR, APP_SCRIPT, SAMPLES_DIR
from prefeval_core.workflow.dashboard import dashboard_command
from prefeval_core.workflow.session import sample_names
from ui.browser import CHROMIUM, launch_chromium, served_app

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
UV = Path(sys.executable).parent / "uv"
REQUIREMENT_FILES = {
    # requirements file -> the pyproject groups it pins (the README's install: the core, the dashboard, PostgreSQL support)
    "requirements.txt": ("dependencies", "app", "postgres"),
    "requirements-learned.txt": ("learned",),
    "requirements-dev.txt": ("test",),
}
PROJECT = canonicalize_name(PYPROJECT["project"]["name"])


# --- dependencies: declared in pyproject.toml, pinned in the requirements files ----------------


def declared(group: str) -> dict[str, Requirement]:
    entries = PYPROJECT["project"]["dependencies"] if group == "dependencies" else PYPROJECT["project"]["optional-dependencies"][group]
    requirements = [Requirement(entry) for entry in entries]
    return {canonicalize_name(r.name): r for r in requirements if canonicalize_name(r.name) != PROJECT}


def pinned(file: str) -> dict[str, Requirement]:
    """The file's own requirements (``-r`` includes are checked separately)."""
    lines = [line.split("#", 1)[0].strip() for line in (ROOT / file).read_text().splitlines()]
    requirements = [Requirement(line) for line in lines if line and not line.startswith("-")]
    return {canonicalize_name(r.name): r for r in requirements}


@pytest.mark.parametrize("file", sorted(REQUIREMENT_FILES))
def test_requirements_pin_exactly_what_pyproject_declares(file: str) -> None:
    pins = pinned(file)
    wanted = {name: r for group in REQUIREMENT_FILES[file] for name, r in declared(group).items()}
    assert set(pins) == set(wanted), f"{file} and pyproject.toml {REQUIREMENT_FILES[file]} name different packages"
    for name, pin in pins.items():
        (spec,) = pin.specifier
        assert spec.operator == "==", f"{file}: {pin} is not an exact pin"
        assert wanted[name].specifier.contains(spec.version, prereleases=True), f"{file}: {pin} is outside pyproject's {wanted[name]}"
        assert pin.extras == wanted[name].extras, f"{file}: {pin} and pyproject's {wanted[name]} ask for different extras"


def test_the_test_extra_includes_what_requirements_dev_includes() -> None:
    includes = {line.split()[1] for line in (ROOT / "requirements-dev.txt").read_text().splitlines() if line.startswith("-r ")}
    test_extra = [Requirement(e) for e in PYPROJECT["project"]["optional-dependencies"]["test"]]
    (itself,) = [r for r in test_extra if canonicalize_name(r.name) == PROJECT]
    covered = {group for file in includes for group in REQUIREMENT_FILES[file] if group != "dependencies"}
    assert itself.extras == covered == {"app", "learned", "postgres"}


def test_streamlit_is_the_app_extra_only() -> None:
    # `pip install prefeval` is the core, the CLI and the notebook API; the dashboard is `prefeval[app]`
    assert "streamlit" not in declared("dependencies")
    assert set(declared("app")) == {"streamlit"}


def test_torch_is_pinned_exactly_in_the_extra() -> None:
    # a range would let pip or uv fetch a newer multi-GB CUDA build instead of the local CPU one
    assert str(declared("learned")["torch"].specifier).startswith("==")


# --- version, entry point, the app command, the bundled files --------------------------------


def test_version_is_the_packages(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"prefeval {prefeval_core.__version__}"
    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "prefeval_core/__init__.py"
    assert PYPROJECT["project"]["scripts"] == {"prefeval": "prefeval_core.cli:main"}


def test_bundled_files_in_a_clone_are_at_the_top() -> None:
    assert APP_DIR == ROOT and APP_SCRIPT == ROOT / "app.py" and SAMPLES_DIR == ROOT / "sample_data"
    assert {"summeval", "pandalm", "wmt21_ted"} <= set(sample_names())
    assert not {"corpus", "models"} & set(sample_names())  # the corpus and the model are no samples


def test_app_hands_its_other_options_to_streamlit(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []

    def exec_instead(path: str, command: list[str]) -> None:
        started.append(command)
        raise SystemExit(0)  # where the real os.execv would become the server

    monkeypatch.setattr(os, "execv", exec_instead)
    with pytest.raises(SystemExit):
        main(["app", "--server.port", "8765", "--theme.base", "dark"])
    assert started == [[sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT), "--server.port", "8765", "--theme.base", "dark"]]
    assert dashboard_command([]) == [sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT)]


def test_app_without_streamlit_says_which_extra(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "streamlit", None)  # as if the extra were not installed
    monkeypatch.setattr(os, "execv", lambda *_: pytest.fail("started streamlit although it is missing"))
    assert main(["app"]) == 1
    assert capsys.readouterr().err.strip() == MISSING_STREAMLIT
    assert MISSING_STREAMLIT.endswith("pip install 'prefeval[app]'")


def test_core_cli_and_api_run_without_streamlit() -> None:
    """Every module of prefeval_core imports, ``prefeval --version`` runs and ``prefeval app`` says what
    to install, with Streamlit blocked (a finder that refuses it, in a fresh interpreter)."""
    code = (
        "import contextlib, importlib, io, pkgutil, sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'streamlit':\n"
        "            raise ModuleNotFoundError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import prefeval_core\n"
        "for module in pkgutil.walk_packages(prefeval_core.__path__, 'prefeval_core.'):\n"
        "    if not module.name.endswith('__main__'):\n"
        "        importlib.import_module(module.name)\n"
        "assert not [name for name in sys.modules if name.split('.')[0] == 'streamlit']\n"
        "from prefeval_core.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit as exit_:\n"
        "    assert exit_.code == 0, exit_.code\n"
        "sys.stdout.flush()\n"
        "assert main(['app']) == 1\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"prefeval {prefeval_core.__version__}"
    assert "pip install 'prefeval[app]'" in done.stderr


def test_other_commands_refuse_options_they_do_not_know(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", str(SAMPLES_DIR / "summeval"), "--server.port", "1"])
    assert exit_info.value.code == 2
    assert "unrecognized arguments: --server.port 1" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["validate", "describe"])
def test_data_option_and_positional_files_are_the_same(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(SAMPLES_DIR / "pandalm")
    assert main([command, sample, "--json"]) == 0
    positional = capsys.readouterr().out
    assert main([command, "--data", sample, "--json"]) == 0
    assert capsys.readouterr().out == positional
    with pytest.raises(SystemExit) as exit_info:
        main([command])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip() == f"prefeval {command}: error: give data files or folders (FILE... or --data PATH...)"


def test_postgresql_without_psycopg_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefeval_core.store.engine import StoreError, connect, database_url

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the extra were not installed
    with pytest.raises(StoreError, match=re.escape("pip install 'prefeval[postgres]'")):
        connect(database_url("postgresql://someone@127.0.0.1:1/db"))


# --- the wheel ---------------------------------------------------------------------------------


def need_uv() -> Path:
    if not UV.exists():
        if os.environ.get("CI"):
            pytest.fail(f"uv is needed to build and install the wheel ({UV} is missing; scripts/setup-env.sh installs it)")
        pytest.skip(f"uv not found at {UV}")
    return UV


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing from this clone or the test process's JAX setup;
    bytecode written on first use (a fresh venv has none)."""
    left_out = ("PYTHONPATH", "VIRTUAL_ENV", "JAX_ENABLE_X64", "XLA_FLAGS", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in left_out} | extra


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([str(need_uv()), "build", "--wheel", "--quiet", "--out-dir", str(out), str(ROOT)], check=True, env=clean_env())
    (built,) = out.glob("prefeval-*.whl")
    return built


def tracked(folder: str) -> set[str]:
    listed = subprocess.run(["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return set(listed)


def test_wheel_holds_the_core_and_the_dashboard_under_one_folder(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"prefeval-{prefeval_core.__version__}.dist-info/METADATA").decode()
        entry_points = archive.read(f"prefeval-{prefeval_core.__version__}.dist-info/entry_points.txt").decode()
    assert {name.split("/")[0] for name in names} == {"prefeval_core", "prefeval_app", f"prefeval-{prefeval_core.__version__}.dist-info"}
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    core = {name for name in names if name.startswith("prefeval_core/")}
    assert core == tracked("prefeval_core")
    app = {name.removeprefix("prefeval_app/") for name in names if name.startswith("prefeval_app/")}
    assert app == {"app.py", ".streamlit/config.toml"} | tracked("pages") | tracked("ui") | tracked("sample_data")
    assert "prefeval = prefeval_core.cli:main" in entry_points
    requires = {line.removeprefix("Requires-Dist: ") for line in metadata.splitlines() if line.startswith("Requires-Dist: ")}
    assert {r for r in requires if "extra ==" not in r} == {str(Requirement(d)) for d in PYPROJECT["project"]["dependencies"]}
    assert {"Provides-Extra: learned", "Provides-Extra: postgres", "Provides-Extra: test"} <= set(metadata.splitlines())


@dataclass(frozen=True)
class FreshVenv:
    """A virtualenv with only the wheel and its runtime dependencies (with the app extra), and a folder outside the clone to run in."""

    bin: Path
    work: Path

    def run(self, *command: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, cwd=self.work, env=clean_env(), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FreshVenv]:
    root = tmp_path_factory.mktemp("fresh")
    uv = str(need_uv())
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(root / "venv")], check=True, env=clean_env())
    python = str(root / "venv" / "bin" / "python")
    # the wheel with its dashboard (the app extra), as `pip install "prefeval[app]"`
    with_app = f"prefeval[app] @ {wheel.as_uri()}"
    install = [uv, "pip", "install", "--quiet", "--python", python, "-c", str(ROOT / "requirements.txt"), with_app]
    subprocess.run(install, check=True, env=clean_env())
    (root / "work").mkdir()
    yield FreshVenv(root / "venv" / "bin", root / "work")


def test_installed_package_is_the_wheel_not_the_clone(fresh_venv: FreshVenv) -> None:
    probe = "import prefeval_core, prefeval_core.data.bundled as b; print(prefeval_core.__file__); print(b.APP_DIR); print(b.SAMPLES_DIR)"
    done = fresh_venv.run(str(fresh_venv.bin / "python"), "-c", probe)
    assert done.returncode == 0, done.stderr
    package, app_dir, samples = map(Path, done.stdout.split())
    site = package.parents[1]
    assert site.name == "site-packages" and ROOT not in package.parents
    assert app_dir == site / "prefeval_app" and samples == site / "prefeval_app" / "sample_data"
    assert not (site / "ui").exists() and not (site / "pages").exists() and not (site / "app.py").exists()


def test_installed_command_prints_its_version(fresh_venv: FreshVenv) -> None:
    done = fresh_venv.run(str(fresh_venv.bin / "prefeval"), "--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"prefeval {prefeval_core.__version__}"), done.stderr
    module = fresh_venv.run(str(fresh_venv.bin / "python"), "-m", "prefeval_core", "--version")
    assert module.stdout == done.stdout


def test_installed_replay_equals_the_clones(fresh_venv: FreshVenv, capsys: pytest.CaptureFixture[str]) -> None:
    options = ["--human", "human:relevance", "--metric", "rougeL", "--question", "top-k", "--batch", "20", "--json"]
    installed_sample = fresh_venv.bin.parent / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    installed_sample = installed_sample / "prefeval_app" / "sample_data" / "summeval"
    done = fresh_venv.run(str(fresh_venv.bin / "prefeval"), "replay", "--data", str(installed_sample), *options)
    assert done.returncode == 0, done.stderr
    installed = json.loads(done.stdout)
    assert main(["replay", "--data", str(SAMPLES_DIR / "summeval"), *options]) == 0
    clone = json.loads(capsys.readouterr().out)
    for output in (installed, clone):
        output["summary"].pop("wall_s")
    assert installed == clone and len(installed["pairs"]) == 120 and installed["summary"]["question"] == "top-k"


def readme_python_example() -> str:
    """Every ``python`` code block of the README's "Python" section, in order."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, flags=re.M | re.S)
    assert blocks, "the README's Python section has no python code block"
    return "\n".join(blocks)


def test_installed_package_runs_the_readme_example(fresh_venv: FreshVenv) -> None:
    script = fresh_venv.work / "readme_example.py"
    script.write_text(readme_python_example())
    done = fresh_venv.run(str(fresh_venv.bin / "python"), str(script))
    assert done.returncode == 0, done.stderr
    assert "<Replay on summeval: human:relevance with rougeL" in done.stdout
    assert "<Metric check of rougeL against human:relevance on 120 pairs" in done.stdout
    assert "<Replay on dataframes: human with my_metric, top-k" in done.stdout


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium")
def test_installed_dashboard_opens_on_the_bundled_sample(fresh_venv: FreshVenv, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    server = (str(fresh_venv.bin / "prefeval"), "app")
    env = clean_env(PREFEVAL_DATA_DIR=str(tmp_path / "store"))
    with served_app(tmp_path / "streamlit.log", env, server=server, cwd=fresh_venv.work) as url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        main_area = page.locator('[data-testid="stMain"]')
        expect(main_area.get_by_text("Loaded summeval")).to_be_visible(timeout=90_000)  # ui/, pages/, samples found installed
        page.get_by_role("link", name="Metric check").click()
        expect(main_area.get_by_text("Sign accuracy", exact=False).first).to_be_visible(timeout=90_000)
        browser.close()
    log = (tmp_path / "streamlit.log").read_text()
    assert "Traceback" not in log, log
