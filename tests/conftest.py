"""Test-wide setup: paths to the shared datasets and the bundled samples."""

from __future__ import annotations

from prefeval_core.runtime import configure_jax

# Before any test imports JAX: the decision engine's golden values are stated for x64.
configure_jax(x64=True, host_devices=2)

import os  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = ROOT / "sample_data"
SHARED_DATA = Path(os.environ.get("PREFEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The workplace's shared datasets (``../shared/data``); CI always has them."""
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"shared datasets not found at {SHARED_DATA}")
        pytest.skip(f"shared datasets not found at {SHARED_DATA} (set PREFEVAL_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def summeval(shared_data: Path):
    from prefeval_core.data.dataset import load_dataset

    return load_dataset(shared_data / "summeval")
