SET LOCAL lock_timeout = {}
