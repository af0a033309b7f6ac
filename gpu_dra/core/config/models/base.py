"""The base of every config model, and how a model validator reports errors on its fields."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails, PydanticCustomError

# Strict: YAML's `true` (or `yes`) is no count, a number is no name, bytes (`!!binary`) are no text. Numbers
# stay numbers (the stack file is read by PyYAML, the engine's objects by the JSON parser: 150 arrives as an int).
STRICT = ConfigDict(strict=True)


class Model(BaseModel):
    """Base of every config model: camelCase keys as written in YAML, unknown keys rejected, immutable, strict."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, validate_by_alias=True,
                              validate_by_name=False, serialize_by_alias=True, frozen=True, **STRICT)


def field_error(field: str | tuple[str, ...], message: str) -> PydanticCustomError:
    """An error on one field of a model, raised from a model validator; the loader appends `field` (a dotted path
    below the model, list indexes as numbers: requests.0.adminAccess; or the keys themselves, for keys that hold
    dots, such as a label's) to the path."""
    return PydanticCustomError("gpu_dra_field", "{message}", {"field": field, "message": message})


def raise_field_errors(model: str, found: Sequence[tuple[str | tuple[str, ...], str]]) -> None:
    """Raise every (field, message) a model validator found at once, so one run reports them all."""
    if found:
        raise ValidationError.from_exception_data(model, [
            InitErrorDetails(type=field_error(field, message), loc=(), input=None) for field, message in found])
