-- On-disk size (heap + TOAST + indexes) and row count estimate of the application's tables.
SELECT c.relname, pg_total_relation_size(c.oid), greatest(c.reltuples, 0)::bigint
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> 'schema_migrations'
 ORDER BY pg_total_relation_size(c.oid) DESC
