"""A package's names imported on first use (PEP 562).

A package whose ``__init__`` imported every module made importing any one of them load them all:
a registry's words or an option's choices brought in the decision engine, pandas and SciPy, and a
command's ``--help`` took a second or two. A package whose ``__init__`` imports its names under
``if TYPE_CHECKING:`` (what type checkers and readers see) and ends with
``__getattr__, __all__ = lazy_package(__name__, __file__)`` imports each from its module only when
it is first used: the one list of names is that block (scientific-python's ``lazy_loader`` reads
a stub file the same way).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def lazy_package(package: str, init_file: str) -> tuple[Callable[[str], Any], list[str]]:
    """The module ``__getattr__`` (:func:`lazy_names`) and ``__all__`` of ``package``, whose names are
    those its ``__init__`` (``init_file``) imports from its own modules under ``if TYPE_CHECKING:``."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    blocks = [node.body for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    modules = {
        alias.asname or alias.name: statement.module.removeprefix(package + ".")
        for block in blocks
        for statement in block
        if isinstance(statement, ast.ImportFrom) and statement.module and statement.module.startswith(package + ".")
        for alias in statement.names
    }
    return lazy_names(package, modules), sorted(modules)


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: each name of ``modules`` (name -> the module of the
    package it lives in) is imported on first access and then kept as a plain attribute."""

    def __getattr__(name: str) -> Any:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{modules[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def imported_on_call(path: str) -> Callable[..., Any]:
    """The function at ``path`` (``package.module:function``), imported when first called: a
    registry can name what its entries do without loading it."""
    module, _, name = path.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call
