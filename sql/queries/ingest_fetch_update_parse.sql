-- Record the outcome of parsing archived fetches.
UPDATE feed_fetches AS f
   SET parse_error = t.parse_error, items_parsed = t.items_parsed, parse_status = t.parse_status,
       entries_total = t.entries_total, skipped = t.skipped, repairs = t.repairs
  FROM unnest(%(ids)s::bigint[], %(parse_errors)s::text[], %(items_parsed)s::integer[], %(parse_statuses)s::text[],
              %(entries_totals)s::integer[], %(skipped)s::jsonb[], %(repairs)s::jsonb[])
       AS t(id, parse_error, items_parsed, parse_status, entries_total, skipped, repairs)
 WHERE f.id = t.id
   AND (f.parse_error, f.items_parsed, f.parse_status, f.entries_total, f.skipped, f.repairs)
       IS DISTINCT FROM (t.parse_error, t.items_parsed, t.parse_status, t.entries_total, t.skipped, t.repairs)
