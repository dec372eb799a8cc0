-- The row count of one table of `newsdedup status` (its name filled by psycopg.sql).
SELECT count(*) FROM {}
