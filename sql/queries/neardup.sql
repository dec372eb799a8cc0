-- name: advisory_xact_lock_pair
-- Lock (namespace, key) held until the transaction ends: one near-duplicate run of an hour at a time.
SELECT pg_advisory_xact_lock(%s, %s)

-- name: neardup_group_members
-- Every member (anchor + duplicates) of the given anchors' groups, with the hour that decided
-- each duplicate (NULL for the anchor itself).
SELECT g.anchor, i.id, i.title, coalesce(i.lang, s.language), i.url, s.syndicator, i.published_at, g.decided
  FROM (SELECT a.anchor, a.anchor, NULL::timestamptz FROM unnest(%(anchors)s::text[]) AS a(anchor)
        UNION ALL
        SELECT d.canonical_item_id, d.item_id, d.partition_hour FROM item_duplicates d
         WHERE d.canonical_item_id = ANY(%(anchors)s)) AS g(anchor, member, decided)
  JOIN items i ON i.id = g.member
  JOIN sources s ON s.id = i.source_id
 ORDER BY g.anchor, i.id

-- name: neardup_groups_prune
-- Groups left with no duplicate (after a rerun removed them) are not groups.
DELETE FROM duplicate_groups g
 WHERE g.anchor_item_id = ANY(%(anchors)s)
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.canonical_item_id = g.anchor_item_id)

-- name: neardup_groups_upsert
-- Each duplicate group's representative and size, as of the hour that last changed it.
INSERT INTO duplicate_groups (anchor_item_id, representative_item_id, member_count, updated_partition)
SELECT * FROM unnest(%(anchors)s::text[], %(representatives)s::text[], %(counts)s::int[], %(hours)s::timestamptz[])
ON CONFLICT (anchor_item_id) DO UPDATE
   SET representative_item_id = EXCLUDED.representative_item_id,
       member_count = EXCLUDED.member_count, updated_partition = EXCLUDED.updated_partition

-- name: neardup_insert
-- The hour's duplicate decisions: each item and the canonical item it duplicates, by which rule.
INSERT INTO item_duplicates (item_id, canonical_item_id, rule, similarity, partition_hour)
SELECT * FROM unnest(%(item_ids)s::text[], %(canonical_ids)s::text[], %(rules)s::text[],
                     %(similarities)s::real[], %(hours)s::timestamptz[])
ON CONFLICT (item_id) DO UPDATE
   SET canonical_item_id = EXCLUDED.canonical_item_id, rule = EXCLUDED.rule,
       similarity = EXCLUDED.similarity, partition_hour = EXCLUDED.partition_hour

-- name: neardup_partition_items
-- Items first ingested in hour H, with what the representative rules need.
SELECT i.id, i.title, coalesce(i.lang, s.language) AS lang, i.url, i.canonical_url,
       s.syndicator, i.published_at
  FROM items i
  JOIN sources s ON s.id = i.source_id
 WHERE i.partition_hour = %(hour)s
 ORDER BY i.id

-- name: neardup_undo_later
-- Recomputing history (later_partitions = reset): forget the duplicates decided by hours after H,
-- so H sees only what had arrived by H (as the first run did); the later hours must then be re-run.
-- Returns the anchors whose groups lost members.
DELETE FROM item_duplicates WHERE partition_hour > %(hour)s
RETURNING canonical_item_id

-- name: neardup_undo_partition
-- Idempotency: remove what a previous run of hour H decided.
DELETE FROM item_duplicates WHERE partition_hour = %(hour)s

-- name: neardup_window_items
-- Items of the lookback window before H (all of them: titles feed the IDF; canonical
-- ones are match candidates), restricted to the languages present in H.
SELECT i.id, i.title, coalesce(i.lang, s.language) AS lang, i.url, i.canonical_url,
       s.syndicator, i.published_at, (d.item_id IS NULL) AS is_canonical
  FROM items i
  JOIN sources s ON s.id = i.source_id
  LEFT JOIN item_duplicates d ON d.item_id = i.id
 WHERE i.partition_hour >= %(window_start)s AND i.partition_hour < %(hour)s
   AND coalesce(i.lang, s.language) = ANY(%(langs)s)
 ORDER BY i.id
