"""Process-wide JAX setup, called once by entry points (``app.py``, ``tests/conftest.py``, the CLI).

Importing the core never changes JAX's configuration; an entry point calls
:func:`configure_jax` before anything imports ``jax`` (or at least before the first JAX
computation). Two settings matter:

* ``x64``: double precision. The decision engine works in either precision, but its
  golden values and its bit-for-bit reproducibility are stated for ``x64=True``.
* ``host_devices``: how many CPU devices XLA exposes. NumPyro runs NUTS chains in parallel
  (``chain_method="parallel"``) only with one device per chain; the reference sampler's
  paper settings use 5 chains. XLA reads ``XLA_FLAGS=--xla_force_host_platform_device_count=N``
  once, when the CPU backend starts (the first JAX computation after ``import jax``), so this
  must run before that; afterwards the flag is ignored and a warning says so.
"""

from __future__ import annotations

import os
import re
import sys
import warnings

from prefeval_core.errors import settings_error

_DEVICE_FLAG = "--xla_force_host_platform_device_count"


def configure_jax(*, x64: bool = True, host_devices: int | None = None) -> None:
    """Set JAX's precision and the number of host (CPU) devices for this process.

    Args:
        x64: enable 64-bit floats and ints (``jax_enable_x64``). Can be changed at any time.
        host_devices: number of CPU devices to expose (``None`` leaves ``XLA_FLAGS`` alone).
            Takes effect only if no JAX backend has started yet; an existing
            ``--xla_force_host_platform_device_count`` in ``XLA_FLAGS`` is replaced.
    """
    if host_devices is not None:
        if host_devices < 1:
            raise settings_error(f"host_devices must be at least 1, got {host_devices}")
        if _backend_started() and _DEVICE_FLAG + f"={host_devices}" not in os.environ.get("XLA_FLAGS", ""):
            # Streamlit re-runs app.py on every interaction: repeating the same setting is fine.
            warnings.warn(
                "configure_jax(host_devices=...) was called after JAX started its CPU backend; the device count stays unchanged",
                stacklevel=2,
            )
        flags = re.sub(rf"{_DEVICE_FLAG}=\S+", "", os.environ.get("XLA_FLAGS", "")).split()
        os.environ["XLA_FLAGS"] = " ".join([*flags, f"{_DEVICE_FLAG}={host_devices}"])
    if "jax" in sys.modules:
        sys.modules["jax"].config.update("jax_enable_x64", x64)
    else:  # read by jax on import; keeps commands that never touch JAX from paying for its import
        os.environ["JAX_ENABLE_X64"] = "1" if x64 else "0"


def _backend_started() -> bool:
    """Whether JAX has already created its backends (after which XLA_FLAGS are read)."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge

        return bool(getattr(xla_bridge, "_backends", {}))
    except ImportError:  # private module moved: assume started, so the caller is warned
        return True
