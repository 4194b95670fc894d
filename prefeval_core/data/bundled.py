"""Where the files that ship with prefeval are: the dashboard (``app.py``, ``pages/``, ``ui/``,
``.streamlit/config.toml``) and the bundled samples, corpus and model (``sample_data/``).

In a clone they sit at the repository's top, beside ``prefeval_core/``. An installed wheel keeps
them in a ``prefeval_app/`` folder beside the package (``pyproject.toml`` maps them there), so that
installing prefeval adds no top-level ``ui`` or ``pages`` to site-packages. Streamlit puts the
folder of the script it runs on ``sys.path``, so the dashboard's ``import ui`` works in both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from prefeval_core.errors import settings_error

_PACKAGE_PARENT: Final = Path(__file__).resolve().parents[2]
_INSTALLED: Final = _PACKAGE_PARENT / "prefeval_app"

APP_DIR: Final = _INSTALLED if (_INSTALLED / "app.py").is_file() else _PACKAGE_PARENT
"""The dashboard's folder: the installed ``prefeval_app/``, else the clone's top."""
APP_SCRIPT: Final = APP_DIR / "app.py"
"""The dashboard's entry point (``streamlit run`` it; ``prefeval app`` does)."""
SAMPLES_DIR: Final = APP_DIR / "sample_data"
"""The bundled samples (``sample_data/<name>/``), the English corpus and the shipped SEScore2 model."""


def sample_names() -> tuple[str, ...]:
    """The bundled samples (folders with a ratings or preferences file: not the corpus or the model), sorted."""
    return tuple(sorted({f.parent.name for f in SAMPLES_DIR.glob("*/*") if f.name.startswith(("ratings.", "preferences."))}))


SAMPLE_PREFIX: Final = "sample:"
"""How a command line names a bundled sample instead of a path: ``--data sample:summeval``."""


def data_path(spec: str) -> str | Path:
    """``spec`` as given, or for ``sample:NAME`` the bundled sample's folder.

    Raises:
        SettingsError: ``sample:NAME`` naming no bundled sample (the message lists them).
    """
    if not spec.startswith(SAMPLE_PREFIX):
        return spec
    name = spec.removeprefix(SAMPLE_PREFIX)
    if name not in sample_names():
        raise settings_error(f"no bundled sample named {name!r}; known: {', '.join(sample_names())}", field="--data")
    return SAMPLES_DIR / name
