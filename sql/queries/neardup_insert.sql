INSERT INTO item_duplicates (item_id, canonical_item_id, rule, similarity, partition_hour)
SELECT * FROM unnest(%(item_ids)s::text[], %(canonical_ids)s::text[], %(rules)s::text[],
                     %(similarities)s::real[], %(hours)s::timestamptz[])
ON CONFLICT (item_id) DO UPDATE
   SET canonical_item_id = EXCLUDED.canonical_item_id, rule = EXCLUDED.rule,
       similarity = EXCLUDED.similarity, partition_hour = EXCLUDED.partition_hour
