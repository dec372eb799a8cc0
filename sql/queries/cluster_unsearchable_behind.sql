UPDATE stories SET searchable = false WHERE model = %s AND searchable AND latest_published_at < %s
