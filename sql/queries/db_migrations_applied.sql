SELECT version, checksum FROM schema_migrations
