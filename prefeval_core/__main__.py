"""``python -m prefeval_core``: the command-line interface."""

from prefeval_core.runtime import configure_jax

# Before anything imports JAX: double precision, and one CPU device per NUTS chain of the
# reference sampler (paper settings: 5 chains).
configure_jax(x64=True, host_devices=5)

from prefeval_core.cli import main  # noqa: E402

raise SystemExit(main())
