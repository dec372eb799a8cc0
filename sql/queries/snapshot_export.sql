SELECT pg_export_snapshot()
