-- Record the outcome of parsing archived fetches.
UPDATE feed_fetches AS f
   SET parse_error = t.parse_error, items_parsed = t.items_parsed
  FROM unnest(%(ids)s::bigint[], %(parse_errors)s::text[], %(items_parsed)s::integer[])
       AS t(id, parse_error, items_parsed)
 WHERE f.id = t.id
   AND (f.parse_error, f.items_parsed) IS DISTINCT FROM (t.parse_error, t.items_parsed)
