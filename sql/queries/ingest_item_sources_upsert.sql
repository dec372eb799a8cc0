-- Every (item, source) pair seen: one item reported by two sources has two rows.
-- Same idempotency rule as items: only the hour that first saw the pair rewrites it.
INSERT INTO item_sources AS s (item_id, source_id, url, guid, fetch_id, partition_hour)
SELECT * FROM unnest(%(item_ids)s::text[], %(source_ids)s::text[], %(urls)s::text[], %(guids)s::text[],
                     %(fetch_ids)s::bigint[], %(partition_hours)s::timestamptz[])
ON CONFLICT (item_id, source_id) DO UPDATE
   SET url = EXCLUDED.url, guid = EXCLUDED.guid, fetch_id = EXCLUDED.fetch_id
 WHERE s.partition_hour = EXCLUDED.partition_hour
   AND (s.url, s.guid, s.fetch_id) IS DISTINCT FROM (EXCLUDED.url, EXCLUDED.guid, EXCLUDED.fetch_id)
RETURNING s.item_id, s.source_id, (xmax = 0) AS inserted
