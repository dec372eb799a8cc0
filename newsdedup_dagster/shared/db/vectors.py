"""pgvector plumbing shared by the stages that store or search vectors: which model's vectors a
column holds and its per-model HNSW expression indexes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import psycopg
from psycopg import sql as pgsql

from newsdedup_dagster.shared import db

# pgvector limits: an HNSW index on `vector` stops at 2,000 dims, on `halfvec` at 4,000.
VECTOR_INDEX_MAX_DIMS = 2000
HALFVEC_INDEX_MAX_DIMS = 4000


@dataclass(frozen=True)
class ModelInfo:
    model: str
    provider: str
    dims: int
    index_type: str  # vector | halfvec
    # Stored vectors centred per language (migration 032); None = not recorded yet.
    centring: bool | None = None

    @property
    def cast(self) -> str:
        return f"{self.index_type}({self.dims})"


def index_type_for(dims: int) -> str:
    if dims <= VECTOR_INDEX_MAX_DIMS:
        return "vector"
    if dims <= HALFVEC_INDEX_MAX_DIMS:
        return "halfvec"
    raise ValueError(f"{dims} dims: pgvector HNSW indexes stop at {HALFVEC_INDEX_MAX_DIMS}; set NEWSDEDUP_EMBEDDING_DIMENSIONS")


def vector_expr(info: ModelInfo, column: str, alias: str | None = None) -> pgsql.Composable:
    """`(alias.column::vector(N))` -- the exact expression the per-model index is built on."""
    ident = pgsql.Identifier(alias, column) if alias else pgsql.Identifier(column)
    return pgsql.SQL("({}::{})").format(ident, pgsql.SQL(info.cast))


def hnsw_index_name(table: str, model: str) -> str:
    """The HNSW index of `table`'s vectors for `model` (one per model: a partial index on its rows)."""
    return f"{table}_hnsw_{hashlib.sha1(model.encode()).hexdigest()[:10]}"


def index_build_memory(conn: psycopg.Connection, megabytes: int) -> None:
    """maintenance_work_mem for the rest of the transaction: pgvector builds fast while the graph fits in
    it (clustering.index_build_memory_mb in the calibration file; at the 64 MB default the build spills
    near 28k rows)."""
    db.set_local(conn, maintenance_work_mem=f"{int(megabytes)}MB")


def create_index(conn: psycopg.Connection, info: ModelInfo, name: str, table: str, column: str,
                 m: int, ef_construction: int, predicate: str = "") -> None:
    """The model's partial HNSW expression index `name` on table.column, unless it exists
    (embed_create_index); predicate: more of its WHERE clause (` AND flag`)."""
    opclass = "vector_cosine_ops" if info.index_type == "vector" else "halfvec_cosine_ops"
    conn.execute(pgsql.SQL(db.load_sql("embed_create_index")).format(
        index=pgsql.Identifier(name), table=pgsql.Identifier(table), expr=vector_expr(info, column),
        opclass=pgsql.SQL(opclass), model=pgsql.Literal(info.model), m=pgsql.Literal(int(m)),
        ef_construction=pgsql.Literal(int(ef_construction)), predicate=pgsql.SQL(predicate)))
