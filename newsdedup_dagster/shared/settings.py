"""One declaration per setting, one loader for all of them.

A setting is a field of a frozen settings dataclass, declared with `setting()`: its default, where
it is read from, one line of meaning and, where the code checks them, its bounds or choices; its
type is the field's annotation. An operator's setting is read from its environment variable; a
constant chosen on data or for the engineering (`calibrated=True`) is read from the deployment's
calibration file (NEWSDEDUP_CALIBRATION_FILE, TOML), key `<CALIBRATION>.<field>`, where the class
attribute CALIBRATION names the stage's section. `load_settings(SettingsClass, environ)` reads
every declared field with one message style for a bad value, "NAME='value': expected <what>", and
the tables of docs/CONFIGURATION.md and docs/CALIBRATION.md are generated from the same
declarations (`config.configuration_markdown`, `config.calibration_markdown`). A declaration's `Bound` is the one
parser of a setting's text and the one check of its value, whatever the source (the environment,
`newsdedup eval --set`, run config, code), and `plain_number` the one way a number is shown, so a
value is accepted, refused and described alike everywhere.

This module imports no stage and no Dagster: every stage's settings class imports it.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import os
import re
import tomllib
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any, TypeVar

S = TypeVar("S")
log = logging.getLogger(__name__)

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def setting(default: Any = MISSING, *, env: str | None = None, doc: str, default_factory: Any = MISSING,
            bounds: tuple[float, float] | None = None, choices: tuple[str, ...] = (), lower: bool = False,
            zero_is_default: bool = False, shown: str | None = None, secret: bool = False,
            per_model: Mapping[str, Mapping[str, Any]] | None = None, calibrated: bool = False,
            was: str | None = None) -> Any:
    """A dataclass field with its declaration in the metadata.

    env: the variable it is read from (None: not read, e.g. a value a builder derives).
    calibrated: a constant chosen on data or for the engineering, read from the calibration file
    (key `<class CALIBRATION>.<field name>`), never from the environment. was: the variable it was
    read from before; set, it is refused with a message naming the key.
    doc: one line of meaning (the configuration table's).
    bounds: closed range (low, high) of a number; choices: the accepted words (matched in lower case).
    lower: the value is lower-cased. zero_is_default: 0 means "the default" (a port left to the mode).
    shown: the default as the table shows it, where it is not the literal default (derived values).
    secret: never shown in a repr (an API key, a password).
    per_model: the table of defaults calibrated per embedding model ({model id: {field: value}}), the
    same object the builder applies, so the configuration table shows what applies; `default` is
    the value of a model the table gives none for this field.
    """
    if calibrated and env:
        raise TypeError(f"{env}: a calibrated setting has no environment variable")
    metadata = {"env": env, "doc": doc, "bounds": bounds, "choices": tuple(choices), "lower": lower,
                "zero_is_default": zero_is_default, "shown": shown, "per_model": per_model,
                "calibrated": calibrated, "was": was}
    return dataclasses.field(default=default, default_factory=default_factory, metadata=metadata,
                             repr=not secret)


@functools.cache
def declared(cls: type) -> tuple[tuple[dataclasses.Field, Any], ...]:
    """(field, annotated type) of every field of `cls` declared with `setting()` (a class's
    declarations never change: resolved once)."""
    hints = typing.get_type_hints(cls)
    return tuple((f, hints[f.name]) for f in dataclasses.fields(cls) if "doc" in f.metadata)


def model_defaults(f: dataclasses.Field) -> dict[str, Any]:
    """{model id: default} of a field declared with `per_model` (only the models the table gives a
    value for this field)."""
    table = f.metadata.get("per_model") or {}
    return {model: values[f.name] for model, values in table.items() if f.name in values}


_warned: set[tuple[str, tuple[str, ...]]] = set()


def warn_uncalibrated(model: str, fallbacks: Iterable[tuple[str, str, Any]]) -> None:
    """Log, once per process for a model and its settings, that `model` is outside the per-model
    table and which uncalibrated defaults it gets: `fallbacks` are (key, calibration key, value) of
    the settings the calibration file does not set (docs/calibration/clustering.md#models-outside-the-table)."""
    fallbacks = list(fallbacks)
    seen = (model, tuple(key for key, _, _ in fallbacks))
    if not fallbacks or seen in _warned:
        return
    _warned.add(seen)
    shown = lambda v: plain_number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else repr(v)  # noqa: E731
    log.warning("embedding model %r is outside the per-model table, so these defaults are not calibrated "
                "for it: %s; calibrate them (docs/calibration/clustering.md#models-outside-the-table) and set them in the "
                "calibration file (NEWSDEDUP_CALIBRATION_FILE)",
                model, ", ".join(f"{key} {shown(value)} ({where})" for key, where, value in fallbacks))


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


def plain_number(number: float, *, thousands: bool = False) -> str:
    """A number as messages, run options and the configuration table show it: no exponent and no
    trailing ".0" (1000000.0 -> '1000000', 0.001 -> '0.001'); `thousands`: an integer value in digit
    groups (1000000 -> '1,000,000')."""
    if thousands and isinstance(number, int) and not isinstance(number, bool):
        return f"{number:,}"
    return str(int(number)) if float(number).is_integer() else repr(float(number))


@dataclass(frozen=True)
class Bound:
    """What one setting accepts, from its declaration (`Bound.of`): its type and a closed range
    of numbers (`low_open`: the low end excluded), a list of words, or any value of its type.

    The one parser of a setting's text (an environment value, `newsdedup eval --set key=value`),
    the one check of a value given as such (run config, code) and the one way of saying what is
    expected, so a value is accepted or refused, and the refusal worded, the same whichever way
    it comes in."""

    kind: Any
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    lower: bool = False
    low_open: bool = False

    @classmethod
    def of(cls, annotation: Any, metadata: Mapping[str, Any]) -> Bound:
        """The bound a `setting()` declaration says (`annotation`: its field's type)."""
        kind, _ = unwrap_optional(annotation)
        if metadata.get("choices"):
            return cls(str, choices=tuple(metadata["choices"]))
        bounds = metadata.get("bounds")
        if kind in (int, float) and bounds:
            low, high = bounds
            return cls(kind, float(low), float(high)) if kind is float else cls(kind, low, high)
        return cls(kind, lower=bool(metadata.get("lower")))

    def within(self, low: float | None = None, high: float | None = None, low_open: bool = False) -> Bound:
        """This number's bound narrowed to `low` / `high` where given (a run is trusted less than
        the deployment); a number neither declares nor is given bounds for cannot be bounded."""
        low = self.low if low is None else low
        high = self.high if high is None else high
        if self.kind not in (int, float) or low is None or high is None:
            raise TypeError(f"no bounds for a {getattr(self.kind, '__name__', self.kind)} setting")
        if self.kind is float:
            low, high = float(low), float(high)
        return dataclasses.replace(self, low=low, high=high, low_open=low_open)

    @property
    def bounded(self) -> bool:
        return self.kind in (int, float) and self.low is not None and self.high is not None

    def what(self) -> str:
        """The kind of number: "an integer" or "a number"."""
        return "an integer" if self.kind is int else "a number"

    def interval(self) -> str:
        """The range in interval notation: "[1, 1000]", "(0, 720]"."""
        return f"{'(' if self.low_open else '['}{plain_number(self.low)}, {plain_number(self.high)}]"

    def expected(self) -> str:
        """What a value may be, as a refusal says it: "an integer from 1 to 1000", "keep or reset"."""
        if self.kind is bool:
            return "true or false"
        if self.choices:
            return " or ".join(self.choices)
        if self.kind in (int, float):
            if not self.bounded:
                return self.what()
            low = plain_number(self.low) + (" (excluded)" if self.low_open else "")
            return f"{self.what()} from {low} to {plain_number(self.high)}"
        return "a value"

    def parse(self, name: str, raw: str) -> Any:
        """`raw` as this setting's type, checked; refused as "NAME='raw': expected <what>".
        Words and numbers are read without surrounding blanks, words in any case; an integer may be
        written as an integral number ("5.0", which `eval --sweep` hands over; "5.5" is refused)."""
        text = raw.strip()
        value: Any = None
        if self.choices:
            value = text.lower()
        elif self.kind is bool:
            word = text.lower()
            value = True if word in TRUE_WORDS else False if word in FALSE_WORDS else None
        elif self.kind is int:
            try:
                value = int(text)
            except ValueError:
                try:
                    number = float(text)
                except ValueError:
                    number = math.nan
                value = int(number) if number.is_integer() else None
        elif self.kind is float:
            try:
                value = float(text)
            except ValueError:
                pass
        elif typing.get_origin(self.kind) is tuple:
            return tuple(part.strip() for part in raw.split(",") if part.strip())
        elif self.kind is Path:
            return Path(raw).expanduser().resolve()
        else:
            return raw.lower() if self.lower else raw
        if value is None or not self.accepts(value):
            raise invalid(name, raw, self.expected())
        return value

    def accepts(self, value: Any) -> bool:
        if self.kind is bool:
            return isinstance(value, bool)
        if self.choices:
            return value in self.choices
        if self.kind in (int, float):
            if isinstance(value, bool) or not isinstance(value, (int, float) if self.kind is float else int):
                return False
            if not self.bounded:
                return True
            # NaN fails both comparisons; infinities fail one
            above = value > self.low if self.low_open else value >= self.low
            return math.isfinite(value) and above and value <= self.high
        return isinstance(value, typing.get_origin(self.kind) or self.kind)

    def check(self, name: str, value: Any) -> None:
        """Refuse a value given as such (run config, code): "name=value: expected <what>"."""
        if not self.accepts(value):
            raise ValueError(f"{name}={value!r}: expected {self.expected()}")


def parse_value(name: str, raw: str, annotation: Any, metadata: Mapping[str, Any]) -> Any:
    """`raw` (an environment value) as the declared type, checked against its choices and bounds."""
    return Bound.of(annotation, metadata).parse(name, raw)


CALIBRATION_FILE = "NEWSDEDUP_CALIBRATION_FILE"


def calibration_key(cls: type, f: dataclasses.Field) -> str:
    """`section.field` of a calibrated setting, as the calibration file and docs/CALIBRATION.md name it."""
    return f"{cls.CALIBRATION}.{f.name}"


@functools.cache
def _read_calibration(path: Path, stamp: tuple[int, int]) -> dict[str, Any]:
    """The file's tables, read once per process and version of the file (`stamp`: its mtime and size)."""
    with path.open("rb") as handle:
        return tomllib.load(handle)


# {section: its keys} of every stage's calibrated settings, registered by config once it has imported
# every settings class (register_calibrated); empty until then.
_KNOWN_CALIBRATION: dict[str, frozenset[str]] = {}


def register_calibrated(classes: Iterable[type]) -> None:
    """Make the calibrated settings of `classes` the keys a calibration file may set."""
    known: dict[str, set[str]] = {}
    for cls in classes:
        known.setdefault(cls.CALIBRATION, set()).update(f.name for f, _ in declared(cls) if f.metadata["calibrated"])
    _KNOWN_CALIBRATION.clear()
    _KNOWN_CALIBRATION.update({section: frozenset(keys) for section, keys in known.items()})


def _check_known(name: str, tables: Mapping[str, Any]) -> None:
    """Refuse a section or key no stage declares. A read before config registered the stages' classes
    (sql_dir, as the db package loads) is checked on the next read, which every builder makes."""
    known = _KNOWN_CALIBRATION
    if not known:
        return
    for section, values in tables.items():
        if section not in known:
            raise ValueError(f"calibration file {name}: unknown section [{section}]; known sections: "
                             f"{', '.join(sorted(known))}")
        if not isinstance(values, dict):
            raise ValueError(f"calibration file {name}: {section} is not a table ([{section}])")
        unknown = sorted(set(values) - known[section])
        if unknown:
            raise ValueError(f"calibration file {name}: unknown key {section}.{unknown[0]}; known keys of "
                             f"[{section}]: {', '.join(sorted(known[section]))}")


def calibration_file(environ: Mapping[str, str] | None = None) -> tuple[str, dict[str, Any]]:
    """(the file as NEWSDEDUP_CALIBRATION_FILE names it, its tables); ("", {}) when unset. A section
    or key no stage declares is refused, naming the known ones."""
    environ = os.environ if environ is None else environ
    name = environ.get(CALIBRATION_FILE) or ""
    if not name:
        return "", {}
    path = Path(name).expanduser()
    try:
        stat = path.stat()
    except OSError as exc:
        raise ValueError(f"calibration file {name}: {exc.strerror or exc}") from None
    try:
        tables = _read_calibration(path.resolve(), (stat.st_mtime_ns, stat.st_size))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"calibration file {name}: {exc}") from None
    _check_known(name, tables)
    return name, tables


def from_calibration(name: str, raw: Any, annotation: Any, metadata: Mapping[str, Any]) -> Any:
    """A calibration file's value (`name`: "calibration file F: section.key") as the declared type,
    through the parser and check an environment value goes through: text is parsed, a TOML
    number, boolean or list of words is checked as such (an integer where a number is asked for
    is that number)."""
    bound = Bound.of(annotation, metadata)
    if isinstance(raw, str):
        return bound.parse(name, raw)
    if isinstance(raw, list) and typing.get_origin(bound.kind) is tuple:
        if all(isinstance(part, str) for part in raw):
            return tuple(part.strip() for part in raw if part.strip())
        raise ValueError(f"{name}={raw!r}: expected a list of words")
    if bound.kind is float and isinstance(raw, int) and not isinstance(raw, bool):
        raw = float(raw)
    bound.check(name, raw)
    return raw


def load_setting(cls: type, name: str, environ: Mapping[str, str] | None = None, default: Any = MISSING) -> Any:
    """One declared field of `cls`: its variable parsed when set and not empty (a calibrated field:
    its key in the calibration file, when there), else `default` (when given: a default the caller
    derives) or the declared default."""
    environ = os.environ if environ is None else environ
    found = next(((f, annotation) for f, annotation in declared(cls) if f.name == name), None)
    if found is None:
        raise KeyError(f"{cls.__name__} declares no setting {name!r}")
    f, annotation = found
    value = default_of(f) if default is MISSING else default
    env = f.metadata["env"]
    parsed: Any = MISSING
    if f.metadata["calibrated"]:
        parsed = calibrated_value(cls, f, annotation, environ)
    else:
        raw = environ.get(env) if env else None
        if raw not in (None, ""):
            parsed = parse_value(env, raw, annotation, f.metadata)
    if parsed is not MISSING:
        if not (f.metadata["zero_is_default"] and parsed == 0):
            value = parsed
    elif isinstance(value, str) and f.metadata["lower"]:
        value = value.lower()
    return value


def calibrated_value(cls: type, f: dataclasses.Field, annotation: Any, environ: Mapping[str, str] | None = None) -> Any:
    """A calibrated field's value in the calibration file, parsed and checked; MISSING when the file
    does not set it. Its former variable, still set, is refused: a value must not silently stop
    applying."""
    environ = os.environ if environ is None else environ
    key = calibration_key(cls, f)
    was = f.metadata["was"]
    if was and environ.get(was):
        raise ValueError(f"{was} is no longer read: set {key} in the calibration file ({CALIBRATION_FILE}; "
                         f"docs/CALIBRATION.md#the-calibration-file)")
    file, tables = calibration_file(environ)
    section = tables.get(cls.CALIBRATION, {})
    if f.name not in section:
        return MISSING
    return from_calibration(f"calibration file {file}: {key}", section[f.name], annotation, f.metadata)


def load_settings(cls: type[S], environ: Mapping[str, str] | None = None, **defaults: Any) -> S:
    """An instance of `cls` with every declared field read from the environment or the calibration
    file (`defaults`: derived defaults by field name, used when neither sets it); the class
    validates it."""
    return cls(**{f.name: load_setting(cls, f.name, environ, defaults.get(f.name, MISSING))
                  for f, _ in declared(cls)})


def merged(settings: S, **overrides: Any) -> S:
    """`settings` with every override that is not None (a resource field or run-config value left
    unset keeps the environment's value). The one way resources and run config override settings;
    the dataclass validates the result again."""
    changes = {key: value for key, value in overrides.items() if value is not None}
    return dataclasses.replace(settings, **changes) if changes else settings
