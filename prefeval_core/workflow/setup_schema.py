"""The schema of a saved study setup (:meth:`~prefeval_core.workflow.setup.StudySetup.as_dict`),
generated from the setup's declaration and checked before
:meth:`~prefeval_core.workflow.setup.StudySetup.from_dict` builds one.

Each field of :class:`~prefeval_core.workflow.setup.StudySetup` (and of the
:class:`~prefeval_core.protocol.questions.Question` in it) becomes a field of the document with
the same name, default and bounds: a name is 1 to 1,000 characters, a number keeps its declared
bounds, a choice from a registry (the question kind, the error control) must be registered, any
other choice is its ``Literal``. The document is strict (:data:`~prefeval_core.data.schema.STRICT`).
"""

from __future__ import annotations

from dataclasses import MISSING
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, Field, StrictStr, create_model

from prefeval_core.data.schema import StrictModel
from prefeval_core.protocol.questions import Question
from prefeval_core.protocol.state_schema import Name, registered
from prefeval_core.vocabulary.fields import Setting, declared
from prefeval_core.workflow.setup import StudySetup


def _document_type(hint: Any, spec: Setting, nested: dict[type, type[BaseModel]]) -> Any:
    """The document's type of a field declared as ``hint`` and ``spec``."""
    if get_origin(hint) in (Union, UnionType) and NoneType in get_args(hint):
        (inner,) = (arg for arg in get_args(hint) if arg is not NoneType)
        return _document_type(inner, spec, nested) | None
    if hint is str:
        return Name
    if hint == tuple[str, ...]:
        return list[Name]
    if hint in nested:
        return nested[hint]
    if callable(spec.choices):
        return Annotated[StrictStr, registered(spec.words)]
    if hint in (int, float):
        bounds = spec.bounds
        return Annotated[hint, Field(ge=bounds.ge, gt=bounds.gt, le=bounds.le, lt=bounds.lt)]
    return hint


def document_model(cls: type, nested: dict[type, type[BaseModel]]) -> type[BaseModel]:
    """A strict pydantic model of the declared dataclass ``cls``, field for field (``nested``: the
    models of declared dataclasses it holds)."""
    hints = get_type_hints(cls)
    model_fields: dict[str, Any] = {}
    for name, (field, spec) in declared(cls).items():
        kind = _document_type(hints[name], spec, nested)
        if field.default is MISSING:
            model_fields[name] = (kind, ...)
        elif isinstance(field.default, tuple):
            model_fields[name] = (kind, Field(default_factory=list))
        elif type(field.default) in nested:
            model_fields[name] = (kind, nested[type(field.default)]())
        else:
            model_fields[name] = (kind, field.default)
    model: type[BaseModel] = create_model(
        f"{cls.__name__}Document", __base__=StrictModel, __doc__=f"{cls.__name__} as saved.", **model_fields
    )
    return model


if TYPE_CHECKING:

    class QuestionDocument(StrictModel):
        """:class:`~prefeval_core.protocol.questions.Question` as saved."""

    class SetupDocument(StrictModel):
        """:class:`~prefeval_core.workflow.setup.StudySetup` as saved (field for field)."""

else:
    QuestionDocument = document_model(Question, {})
    SetupDocument = document_model(StudySetup, {Question: QuestionDocument})
