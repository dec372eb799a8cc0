-- The memory a bulk HNSW build may use, for this transaction: pgvector builds fast while the graph
-- fits in it (NEWSDEDUP_INDEX_BUILD_MEMORY_MB; at the 64 MB default the build spills near 28k rows).
SELECT set_config('maintenance_work_mem', %(memory)s, true)
