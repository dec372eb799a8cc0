"""newsdedup: multilingual news feeds -> deduplicated cross-lingual stories (Dagster + PostgreSQL/pgvector)."""

__version__ = "0.1.0"
