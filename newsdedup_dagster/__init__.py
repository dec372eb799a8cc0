"""newsdedup: multilingual news feeds -> deduplicated cross-lingual stories (Dagster + PostgreSQL/pgvector)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("newsdedup")
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
