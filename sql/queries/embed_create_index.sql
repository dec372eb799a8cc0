-- Per-model partial HNSW expression index (cosine). Formatted by
-- newsdedup_dagster/stages/embeddings/store.py with psycopg.sql: {index}, {table}, {expr}, {opclass},
-- {model} (a literal), {m}, {ef_construction}, {predicate} (more of the WHERE clause, or nothing).
-- Queries must use the same {expr}, `model = <the same literal/parameter>` and the predicate to hit it.
CREATE INDEX IF NOT EXISTS {index} ON {table}
USING hnsw (({expr}) {opclass})
WITH (m = {m}, ef_construction = {ef_construction})
WHERE model = {model}{predicate}
