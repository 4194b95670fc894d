"""``python -m prefeval_core``: the command-line interface."""

from prefeval_core.cli import main

raise SystemExit(main())
