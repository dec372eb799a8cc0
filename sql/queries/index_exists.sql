SELECT 1 FROM pg_class WHERE relname = %s AND relkind = 'i'
