"""What a run may change: op config declared with Dagster's plain types, never a path, a URL or a secret.

Whoever may launch a run (the UI's launchpad, `dagster asset materialize --config-json`, a
schedule's or sensor's run request) is trusted less than the deployment. Two rules follow:

- No `{"env": NAME}`. Dagster turns a `str`, `int` or `bool` field of a Pythonic `Config` into
  StringSource / IntSource / BoolSource, which read any environment variable of the run worker
  into the step (and into its events and outputs). Op config here is declared with the plain
  types `Enum`, `Bool`, `Int` and `Float` instead, so Dagster refuses `{"env": ...}` when it
  validates the run config, before a run exists, and never reads the variable.
- No free text. Modes are enums; languages are an enum of the languages the deployment
  publishes (read once when the code location loads); numbers are bounded. Directories,
  endpoints and secrets are environment settings only (README, "Configuration").

A value Dagster's types cannot bound (a number out of range, a language the run's `llm` resource
does not publish) is refused when the step reads its options, with a message that names the
field and what it accepts but never repeats the value.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Optional, Union

import pydantic
from dagster import Array, Bool, Enum, EnumValue, Failure, Field, Float, Int, Noneable

from .. import config as app_config

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class RunOptions(pydantic.BaseModel):
    """Base of every asset's run options: frozen, unknown keys refused, and convertible to a
    Dagster config schema without Source types (see the module's docstring)."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def config_schema(cls) -> dict[str, Field]:
        return {name: _field(info, f"{cls.__name__}_{name}") for name, info in cls.model_fields.items()}

    @classmethod
    def from_op_config(cls, op_config: Mapping[str, Any] | None):
        """The options of this run, or a Failure (no retries) that names each refused field and
        what it accepts. pydantic's own message repeats the input, so it is not passed on."""
        try:
            return cls(**(op_config or {}))
        except pydantic.ValidationError as exc:
            fields = sorted({".".join(str(p) for p in err["loc"]) or "?" for err in exc.errors()})
            accepted = "; ".join(f"{name}: {cls.accepts(name.split('.')[0])}" for name in fields)
            raise Failure(description=f"run config refused ({accepted})", allow_retries=False) from None

    @classmethod
    def accepts(cls, name: str) -> str:
        info = cls.model_fields.get(name)
        return (info.description or "see the README's configuration section") if info else "no such option"


def _unwrap_optional(annotation):
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return args[0], True
    return annotation, False


def _dagster_type(annotation, name: str):
    inner, optional = _unwrap_optional(annotation)
    origin = typing.get_origin(inner)
    if origin is Literal:
        values = typing.get_args(inner)
        if not all(isinstance(v, str) for v in values):
            raise TypeError(f"run options: Literal of strings only, got {inner}")
        base = Enum(name, [EnumValue(v) for v in values])
    elif origin in (list, tuple):
        (item,) = {a for a in typing.get_args(inner) if a is not Ellipsis}
        base = Array(_dagster_type(item, name))
    elif inner is bool:
        base = Bool
    elif inner is int:
        base = Int
    elif inner is float:
        base = Float
    else:
        # str in particular: free text would accept paths, and Dagster's str is StringSource.
        raise TypeError(f"run options: no plain Dagster type for {inner!r}")
    return Noneable(base) if optional else base


def _field(info, name: str) -> Field:
    kwargs: dict[str, Any] = {"description": info.description}
    if not info.is_required():
        default = info.get_default()
        if default is not None:
            kwargs["default_value"] = list(default) if isinstance(default, tuple) else default
        kwargs["is_required"] = False
    return Field(_dagster_type(info.annotation, name), **kwargs)


def deployment_languages() -> tuple[str, ...]:
    """The language codes a run may ask for: those the deployment publishes (environment)."""
    return app_config.published_languages()


def language_type():
    """`Literal[...]` of the deployment's languages: an enum in the run-config schema."""
    return Literal[deployment_languages()]  # type: ignore[valid-type]


def check_languages(requested: Optional[list[str]], allowed: tuple[str, ...]) -> Optional[list[str]]:
    """The requested languages if each is one the run's settings publish; else a Failure that
    lists the allowed ones (never the request)."""
    if not requested:
        return None
    if any(lang not in allowed for lang in requested):
        raise Failure(description=f"run config refused (langs: languages this deployment publishes: "
                                  f"{', '.join(allowed)})", allow_retries=False)
    return list(dict.fromkeys(requested))
