"""Where the labelled evaluation files are found. A command's file argument is a path, or a bare
file name looked up in the data directory: `--data-dir DIR`, else $NEWSDEDUP_EVAL_DATA_DIR, else
`data` in the working directory. `sample` (for `newsdedup eval --data`) is the bundled sample day.
The files are never shipped with the package (docs/EVALUATION.md says where each comes from)."""

from __future__ import annotations

from pathlib import Path

DATA_DIR_VARIABLE = "NEWSDEDUP_EVAL_DATA_DIR"
DEFAULT_DATA_DIR = Path("data")
SAMPLE_DATA = "sample"
LABELLED_SUFFIX = ".jsonl"


def data_directory(given: str | Path | None, environment_value: str | None) -> Path:
    """The data directory: the command's `--data-dir`, else the environment's value, else ./data."""
    return Path(given or environment_value or DEFAULT_DATA_DIR).expanduser()


def is_bare_name(name: str | Path) -> bool:
    """A file name without a directory part (`gnews_titles.jsonl`, not `./x.jsonl` or `/tmp/x.jsonl`)."""
    text = str(name)
    return "/" not in text and not Path(text).expanduser().is_absolute() and not text.startswith("~")


def resolve_data_file(name: str | Path, directory: str | Path) -> Path:
    """The file `name` means: a path with a directory part as given; a bare file name in `directory`
    (`.jsonl` added when the name has no suffix), else in the working directory. FileNotFoundError
    names where a bare name was looked for."""
    if not is_bare_name(name):
        return Path(name).expanduser()
    directory = Path(directory)
    candidates = [directory / name]
    if not Path(name).suffix:
        candidates.append(directory / f"{name}{LABELLED_SUFFIX}")
    candidates.append(Path(name))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"{name}: no such file in the data directory {directory} (--data-dir or ${DATA_DIR_VARIABLE}) "
        "nor in the working directory")


def resolve_data_argument(name: str | Path, directory: str | Path) -> str | Path:
    """`--data`'s value: `sample` stays the bundled sample day; anything else is a file (resolve_data_file)."""
    return SAMPLE_DATA if str(name) == SAMPLE_DATA else resolve_data_file(name, directory)
