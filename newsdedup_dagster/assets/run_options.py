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
  endpoints and secrets are environment settings only (docs/CONFIGURATION.md).

A value Dagster's types cannot bound (a number out of range, a language the run's `llm` resource
does not publish) is refused by `refused_fields`, with a message that names the field and what it
accepts but never repeats the value. Two callers, one rule: the instance's run coordinator
(`newsdedup_dagster.run_coordinator`), before a run launched from the UI, a schedule, a sensor or
a backfill is queued; and the step when it reads its options (the only check for in-process
runs, e.g. `dagster asset materialize`, which use no coordinator).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union

import pydantic
from dagster import Array, Bool, Enum, EnumValue, Failure, Field, Float, Int, Noneable

from newsdedup_dagster import config as app_config
from newsdedup_dagster.shared.settings import Bound, declared

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class RunOptions(pydantic.BaseModel):
    """Base of every asset's run options: frozen, unknown keys refused, and convertible to a
    Dagster config schema without Source types (see the module's docstring)."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def config_schema(cls) -> dict[str, Field]:
        return {name: _field(info, f"{cls.__name__}_{name}") for name, info in cls.model_fields.items()}

    @classmethod
    def sections(cls) -> dict[str, type[RunOptions]]:
        """The fields that are options of their own (one per stage of a multi-stage op), by name."""
        return {name: info.annotation for name, info in cls.model_fields.items()
                if isinstance(info.annotation, type) and issubclass(info.annotation, RunOptions)}

    @classmethod
    def run_languages(cls, llm_settings) -> tuple[str, ...]:
        """The languages a run of this asset may name in `langs`, given the run's llm settings."""
        for section in cls.sections().values():
            languages = section.run_languages(llm_settings)
            if languages:
                return languages
        return ()

    @classmethod
    def names_languages(cls, op_config: Any) -> bool:
        """Whether `op_config` (or one of its sections) asks for languages."""
        if not isinstance(op_config, Mapping):
            return False
        return bool(op_config.get(LANGUAGES_FIELD)) or any(
            section.names_languages(op_config.get(name)) for name, section in cls.sections().items())

    @classmethod
    def refused_fields(cls, op_config: Any, languages: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        """(field, what it accepts) for each field of `op_config` these options refuse; empty when
        every value is within its bounds and each language named is one of `languages`. Never a
        value: pydantic's own message repeats the input, so only the field names are taken from it."""
        if op_config is None:
            op_config = {}
        if not isinstance(op_config, Mapping):
            return [("config", cls.accepts("config"))]
        sections = cls.sections()
        if sections:
            # Each section answers for its own fields, named "<section>.<field>".
            refused = [("config", cls.accepts("config"))] if set(op_config) - set(cls.model_fields) else []
            for name, section in sections.items():
                refused += [(f"{name}.{field}", accepts)
                            for field, accepts in section.refused_fields(op_config.get(name), languages)]
            return refused
        try:
            options = cls(**op_config)
        except pydantic.ValidationError as exc:
            # An undeclared key is named as "config": the key itself is launcher input too.
            fields = sorted({err["loc"][0] if err["loc"] and err["loc"][0] in cls.model_fields else "config"
                             for err in exc.errors()})
            return [(name, cls.accepts(name)) for name in fields]
        requested = getattr(options, LANGUAGES_FIELD, None)
        if requested and any(lang not in languages for lang in requested):
            return [(LANGUAGES_FIELD, "languages this deployment publishes: " + (", ".join(languages) or "none"))]
        return []

    @classmethod
    def from_op_config(cls, op_config: Mapping[str, Any] | None, languages: tuple[str, ...] = ()):
        """The options of this run, or a Failure (no retries) that names each refused field and
        what it accepts."""
        refused = cls.refused_fields(op_config, languages)
        if refused:
            raise Failure(description=refusal_message(refused), allow_retries=False)
        return cls(**(op_config or {}))

    @classmethod
    def accepts(cls, name: str) -> str:
        info = cls.model_fields.get(name)
        return (info.description or "see docs/CONFIGURATION.md") if info else \
            "only the options in docs/CONFIGURATION.md, \"What a run may change\""


# The one field that names languages; its values must also be ones the run's `llm` resource publishes.
LANGUAGES_FIELD = "langs"


def refusal_message(refused: list[tuple[str, str]]) -> str:
    return "run config refused (" + "; ".join(f"{name}: {accepts}" for name, accepts in refused) + ")"


def run_config_refusal(run_config: Mapping[str, Any] | None, options_by_op: Mapping[str, type[RunOptions]],
                       llm_settings) -> str | None:
    """Why a run's config is refused (each `ops.<op>.config.<field>` and what it accepts, never a
    value), or None. `llm_settings` is a callable giving the run's llm settings, called only when
    a run names languages."""
    ops = (run_config or {}).get("ops") if isinstance(run_config, Mapping) else None
    if not isinstance(ops, Mapping):
        return None
    refused: list[tuple[str, str]] = []
    for op_name in sorted(ops):
        options = options_by_op.get(op_name)
        entry = ops[op_name]
        if options is None or not isinstance(entry, Mapping):
            continue
        op_config = entry.get("config")
        languages = options.run_languages(llm_settings()) if options.names_languages(op_config) else ()
        refused += [(f"ops.{op_name}.config.{name}", accepts)
                    for name, accepts in options.refused_fields(op_config, languages)]
    return refusal_message(refused) if refused else None


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
    if isinstance(info.annotation, type) and issubclass(info.annotation, RunOptions):
        # A section: its own fields, all optional, so the section itself may be left out.
        return Field(info.annotation.config_schema(), is_required=False, description=info.description)
    kwargs: dict[str, Any] = {"description": info.description}
    if not info.is_required():
        default = info.get_default()
        if default is not None:
            kwargs["default_value"] = list(default) if isinstance(default, tuple) else default
        kwargs["is_required"] = False
    return Field(_dagster_type(info.annotation, name), **kwargs)


def _declaration(settings_class: type, name: str):
    for f, annotation in declared(settings_class):
        if f.name == name:
            return f, annotation
    raise KeyError(f"{settings_class.__name__} declares no setting {name!r}")


def run_option(settings_class: type, name: str, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, what: str | None = None) -> Any:
    """The pydantic field of a run option that mirrors the setting `name` of `settings_class`:
    optional (unset = the deployment's setting), with the declaration's choices or bounds, or the
    narrower bounds given (a run is trusted less than the deployment: `low`, `high`, `low_open`
    for an open lower bound), and what it accepts said as a refusal says it. `what` names the
    number ("hours", "a cosine similarity"; default: an integer / a number). The range is the
    declaration's `settings.Bound`, narrowed, and shown with the same number format."""
    f, annotation = _declaration(settings_class, name)
    bound = Bound.of(annotation, f.metadata)
    if bound.choices or bound.kind is bool:
        return pydantic.Field(None, description=bound.expected())
    try:
        bound = bound.within(low, high, low_open)
    except TypeError:
        raise TypeError(f"run option {name}: the setting declares no bounds and none are given") from None
    description = f"{what or bound.what()} in {bound.interval()}"
    return pydantic.Field(None, **({"gt": bound.low} if bound.low_open else {"ge": bound.low}), le=bound.high,
                          description=description)


def choice_type(settings_class: type, name: str):
    """`Literal[...]` of the setting's choices: an enum in the run-config schema."""
    f, _ = _declaration(settings_class, name)
    return Literal[f.metadata["choices"]]  # type: ignore[valid-type]


def deployment_languages() -> tuple[str, ...]:
    """The language codes a run may ask for: those the deployment publishes (environment)."""
    return app_config.published_languages()


def language_type():
    """`Literal[...]` of the deployment's languages: an enum in the run-config schema."""
    return Literal[deployment_languages()]  # type: ignore[valid-type]
