-- The memory a bulk HNSW build may use, for this transaction: pgvector builds fast while the graph
-- fits in it (clustering.index_build_memory_mb in the calibration file; at the 64 MB default the build spills near 28k rows).
SELECT set_config('maintenance_work_mem', %(memory)s, true)
