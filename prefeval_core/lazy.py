"""A package's names imported on first use (PEP 562).

A package whose ``__init__`` imported every module made importing any one of them load them all:
a registry's words or an option's choices brought in the decision engine, pandas and SciPy, and a
command's ``--help`` took a second or two. A package that lists its names with :func:`lazy_names`
imports each from its module only when it is first used.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


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
