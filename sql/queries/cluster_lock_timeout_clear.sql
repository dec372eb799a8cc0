SET LOCAL lock_timeout = 0
