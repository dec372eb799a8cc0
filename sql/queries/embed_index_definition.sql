SELECT reloptions, pg_get_indexdef(oid) FROM pg_class WHERE relname = %s AND relkind = 'i'
