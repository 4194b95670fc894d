"""Names imported on first use (:mod:`prefeval_core.lazy`): a package loads a module only when one of
its names is used, keeps the name afterwards, and refuses names it does not have; a registry's
function is imported when first called."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import prefeval_core.protocol
from prefeval_core.lazy import imported_on_call
from prefeval_core.protocol.error_controls import ERROR_CONTROL_RULES

ROOT = Path(__file__).resolve().parents[1]


def test_a_package_loads_a_module_only_when_one_of_its_names_is_used() -> None:
    probe = (
        "import sys, prefeval_core.protocol as protocol\n"
        "print('prefeval_core.protocol.run' in sys.modules, 'pandas' in sys.modules)\n"
        "run_protocol = protocol.run_protocol\n"
        "print('prefeval_core.protocol.run' in sys.modules, 'run_protocol' in vars(protocol), run_protocol.__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "False", "True", "True", "prefeval_core.protocol.run"]


def test_a_name_the_package_does_not_have_is_refused() -> None:
    with pytest.raises(AttributeError, match=r"module 'prefeval_core\.protocol' has no attribute 'nonexistent'"):
        prefeval_core.protocol.nonexistent  # noqa: B018
    with pytest.raises(ImportError):
        from prefeval_core.protocol import nonexistent  # noqa: F401


def test_a_function_is_imported_when_first_called() -> None:
    dumps = imported_on_call("json:dumps")
    assert dumps.__name__ == "dumps" and dumps([1, "a"]) == '[1, "a"]'
    missing = imported_on_call("prefeval_core.no_such_module:f")  # naming it costs nothing ...
    with pytest.raises(ModuleNotFoundError):
        missing()  # ... calling it imports it
    rounds = {rule.decide.__name__ for rule in ERROR_CONTROL_RULES.values()}
    assert rounds == {"decide_pairs_round", "decide_question_round", "decide_fdr_round"}


@pytest.mark.parametrize(
    "package", ["prefeval_core.protocol", "prefeval_core.decision", "prefeval_core.sequential", "prefeval_core.workflow"]
)
def test_every_name_a_package_lists_resolves_from_the_module_it_names(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__ and module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        getattr(module, name)  # an AttributeError or ImportError names a listed name its module lacks
        assert name in vars(module)  # kept: the next use is a plain attribute
