SELECT pg_advisory_unlock(hashtext('newsdedup.publish:' || %(output_dir)s))
