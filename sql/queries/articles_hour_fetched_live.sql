-- Whether any feed of hour %(hour)s was fetched live (a replayed hour's links are never fetched).
SELECT EXISTS (SELECT 1 FROM feed_fetches WHERE partition_hour = %(hour)s AND mode = 'live')
