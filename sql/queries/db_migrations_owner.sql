SELECT tableowner FROM pg_tables
WHERE schemaname = current_schema() AND tablename = 'schema_migrations'
