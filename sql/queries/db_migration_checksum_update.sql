UPDATE schema_migrations SET checksum = %s WHERE version = %s
