"""One declaration per setting, one loader for all of them.

A setting is a field of a frozen settings dataclass, declared with `setting()`: its default, the
environment variable it is read from, one line of meaning and, where the code checks them, its
bounds or choices; its type is the field's annotation. `load_settings(SettingsClass, environ)`
reads every declared field from the environment with one message style for a bad value,
"NAME='value': expected <what>", and the configuration table (docs/CONFIGURATION.md) is generated
from the same declarations (`config.configuration_markdown`).

This module imports no stage and no Dagster: every stage's settings class imports it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING
from pathlib import Path
from typing import Any, TypeVar

S = TypeVar("S")

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def setting(default: Any = MISSING, *, env: str | None = None, doc: str, default_factory: Any = MISSING,
            bounds: tuple[float, float] | None = None, choices: tuple[str, ...] = (), lower: bool = False,
            zero_is_default: bool = False, shown: str | None = None, secret: bool = False) -> Any:
    """A dataclass field with its declaration in the metadata.

    env: the variable it is read from (None: not read, e.g. a value a builder derives).
    doc: one line of meaning (the configuration table's).
    bounds: closed range (low, high) of a number; choices: the accepted words (matched in lower case).
    lower: the value is lower-cased. zero_is_default: 0 means "the default" (a port left to the mode).
    shown: the default as the table shows it, where it is not the literal default (derived values).
    secret: never shown in a repr (an API key, a password).
    """
    metadata = {"env": env, "doc": doc, "bounds": bounds, "choices": tuple(choices), "lower": lower,
                "zero_is_default": zero_is_default, "shown": shown}
    return dataclasses.field(default=default, default_factory=default_factory, metadata=metadata,
                             repr=not secret)


@functools.cache
def declared(cls: type) -> tuple[tuple[dataclasses.Field, Any], ...]:
    """(field, annotated type) of every field of `cls` declared with `setting()` (a class's
    declarations never change: resolved once)."""
    hints = typing.get_type_hints(cls)
    return tuple((f, hints[f.name]) for f in dataclasses.fields(cls) if "doc" in f.metadata)


def default_of(f: dataclasses.Field) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None


def unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    """(inner type, whether None is allowed) of `X | None`."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def invalid(name: str, raw: str, expected: str) -> ValueError:
    return ValueError(f"{name}={raw!r}: expected {expected}")


# A language code (BCP 47 shape, RFC 5646: `en`, `pt-BR`, `zh-Hans`): languages name files and
# directories (feeds, site pages, digests), so nothing else passes.
LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")


def check_language_codes(name: str, codes: tuple[str, ...]) -> None:
    """Raise the loader's error for `name` unless every one of `codes` is a language code."""
    if not all(isinstance(code, str) and LANGUAGE_CODE.fullmatch(code) for code in codes):
        raise invalid(name, ",".join(map(str, codes)), "comma-separated language codes (BCP 47, e.g. en,pt-BR,zh-Hans)")


def _plain(number: float) -> str:
    """1000000.0 -> '1000000', 0.001 -> '0.001' (no exponent in a message)."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def expected(kind: Any, bounds: tuple[float, float] | None = None, choices: tuple[str, ...] = ()) -> str:
    """What a value of this declaration may be, as a message says it."""
    if kind is bool:
        return "true or false"
    if choices:
        return " or ".join(choices)
    if kind in (int, float):
        what = "an integer" if kind is int else "a number"
        return f"{what} from {_plain(bounds[0])} to {_plain(bounds[1])}" if bounds else what
    return "a value"


def parse_value(name: str, raw: str, annotation: Any, metadata: Mapping[str, Any]) -> Any:
    """`raw` (an environment value) as the declared type, checked against its choices and bounds."""
    kind, _ = unwrap_optional(annotation)
    bounds, choices = metadata.get("bounds"), metadata.get("choices", ())
    if choices:
        value = raw.strip().lower()
        if value not in choices:
            raise invalid(name, raw, expected(kind, bounds, choices))
        return value
    if kind is bool:
        word = raw.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        raise invalid(name, raw, expected(bool))
    if kind in (int, float):
        try:
            value = int(raw) if kind is int else float(raw)
        except ValueError:
            raise invalid(name, raw, expected(kind, bounds)) from None
        if bounds and not (math.isfinite(value) and bounds[0] <= value <= bounds[1]):
            raise invalid(name, raw, expected(kind, bounds))
        return value
    if typing.get_origin(kind) is tuple:
        return tuple(part.strip() for part in raw.split(",") if part.strip())
    if kind is Path:
        return Path(raw).expanduser().resolve()
    return raw.lower() if metadata.get("lower") else raw


def load_setting(cls: type, name: str, environ: Mapping[str, str] | None = None, default: Any = MISSING) -> Any:
    """One declared field of `cls` from the environment: its variable parsed when set and not
    empty, else `default` (when given: a default the caller derives) or the declared default."""
    environ = os.environ if environ is None else environ
    found = next(((f, annotation) for f, annotation in declared(cls) if f.name == name), None)
    if found is None:
        raise KeyError(f"{cls.__name__} declares no setting {name!r}")
    f, annotation = found
    value = default_of(f) if default is MISSING else default
    env = f.metadata["env"]
    raw = environ.get(env) if env else None
    if raw not in (None, ""):
        parsed = parse_value(env, raw, annotation, f.metadata)
        if not (f.metadata["zero_is_default"] and parsed == 0):
            value = parsed
    elif isinstance(value, str) and f.metadata["lower"]:
        value = value.lower()
    return value


def load_settings(cls: type[S], environ: Mapping[str, str] | None = None, **defaults: Any) -> S:
    """An instance of `cls` with every declared field read from the environment (`defaults`:
    derived defaults by field name, used when the variable is unset); the class validates it."""
    return cls(**{f.name: load_setting(cls, f.name, environ, defaults.get(f.name, MISSING))
                  for f, _ in declared(cls)})


def merged(settings: S, **overrides: Any) -> S:
    """`settings` with every override that is not None (a resource field or run-config value left
    unset keeps the environment's value). The one way resources and run config override settings;
    the dataclass validates the result again."""
    changes = {key: value for key, value in overrides.items() if value is not None}
    return dataclasses.replace(settings, **changes) if changes else settings
