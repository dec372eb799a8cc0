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

-- name: neardup_df_window_get
-- Which hours the document frequencies and bands describe (migration 121), locked for this run.
SELECT window_from, window_to FROM neardup_df_window FOR UPDATE

-- name: neardup_df_window_set
-- The hours the document frequencies and bands now describe.
INSERT INTO neardup_df_window (singleton, window_from, window_to) VALUES (true, %(window_from)s, %(window_to)s)
ON CONFLICT (singleton) DO UPDATE SET window_from = EXCLUDED.window_from, window_to = EXCLUDED.window_to

-- name: neardup_hour_titles
-- Every item of one hour (duplicates too: all of them count in the IDF), to enter or leave the window.
SELECT i.id, i.title, coalesce(i.lang, s.language) AS lang, i.canonical_url
  FROM items i
  JOIN sources s ON s.id = i.source_id
 WHERE i.partition_hour = %(hour)s
 ORDER BY i.id

-- name: neardup_df_docs_add
-- An hour enters the window: its items per (language, exact key); a key whose count equals what
-- was added is new to the window (its terms' document frequencies go up).
INSERT INTO neardup_df_docs AS d (lang, exact_key, normalized, items)
SELECT * FROM unnest(%(langs)s::text[], %(keys)s::text[], %(normalized)s::text[], %(counts)s::int[])
ON CONFLICT (lang, exact_key) DO UPDATE SET items = d.items + EXCLUDED.items
RETURNING d.lang, d.exact_key, d.items

-- name: neardup_df_docs_remove
-- An hour leaves the window: counts go down; returns the keys whose last item left (their counted text).
WITH r AS (SELECT * FROM unnest(%(langs)s::text[], %(keys)s::text[], %(counts)s::int[]) AS r(lang, exact_key, n)),
     kept AS (UPDATE neardup_df_docs d SET items = d.items - r.n FROM r
               WHERE d.lang = r.lang AND d.exact_key = r.exact_key AND d.items > r.n)
DELETE FROM neardup_df_docs d USING r
 WHERE d.lang = r.lang AND d.exact_key = r.exact_key AND d.items <= r.n
RETURNING d.lang, d.normalized

-- name: neardup_df_add
-- Document frequencies of the terms of keys new to the window (one row per term, pre-aggregated).
INSERT INTO neardup_df AS f (lang, kind, term, df)
SELECT * FROM unnest(%(langs)s::text[], %(kinds)s::"char"[], %(terms)s::text[], %(counts)s::int[])
ON CONFLICT (lang, kind, term) DO UPDATE SET df = f.df + EXCLUDED.df

-- name: neardup_df_remove
-- Document frequencies of the terms of keys that left the window; a term at zero is removed.
WITH r AS (SELECT * FROM unnest(%(langs)s::text[], %(kinds)s::"char"[], %(terms)s::text[], %(counts)s::int[])
                  AS r(lang, kind, term, n)),
     kept AS (UPDATE neardup_df f SET df = f.df - r.n FROM r
               WHERE f.lang = r.lang AND f.kind = r.kind AND f.term = r.term AND f.df > r.n)
DELETE FROM neardup_df f USING r
 WHERE f.lang = r.lang AND f.kind = r.kind AND f.term = r.term AND f.df <= r.n

-- name: neardup_df_per_lang
-- Window document frequency of each (language, 3-gram): ranks a headline's grams by rarity.
SELECT q.lang, q.term, f.df
  FROM unnest(%(langs)s::text[], %(terms)s::text[]) AS q(lang, term)
  JOIN neardup_df f ON f.lang = q.lang AND f.kind = 'g' AND f.term = q.term

-- name: neardup_df_lookup
-- Window document frequencies of the given terms over the hour's languages (the IDF of the run).
SELECT f.kind::text, f.term, sum(f.df)::bigint
  FROM unnest(%(kinds)s::"char"[], %(terms)s::text[]) AS q(kind, term)
  JOIN neardup_df f ON f.kind = q.kind AND f.term = q.term AND f.lang = ANY(%(langs)s)
 GROUP BY f.kind, f.term

-- name: neardup_df_docs_count
-- Distinct headlines of the window in the hour's languages (the IDF's N).
SELECT count(*) FROM neardup_df_docs WHERE lang = ANY(%(langs)s)

-- name: neardup_df_docs_known
-- Which of the hour's (language, exact key) the window already holds (the others add to the IDF).
SELECT d.lang, d.exact_key
  FROM unnest(%(langs)s::text[], %(keys)s::text[]) AS q(lang, exact_key)
  JOIN neardup_df_docs d ON d.lang = q.lang AND d.exact_key = q.exact_key

-- name: neardup_bands_insert
-- The signatures of an hour entering the window.
INSERT INTO neardup_bands (hash, lang, partition_hour, item_id)
SELECT b.hash, b.lang, %(hour)s, b.item_id
  FROM unnest(%(hashes)s::bigint[], %(langs)s::text[], %(item_ids)s::text[]) AS b(hash, lang, item_id)

-- name: neardup_bands_delete_hour
-- The signatures of an hour leaving the window.
DELETE FROM neardup_bands WHERE partition_hour = %(hour)s

-- name: neardup_band_candidates
-- Window items sharing a band with a new item: one query row per band of a new item (qid groups
-- a new item's rare-gram bands, `need` of them must match; exact and URL bands have their own qid).
SELECT DISTINCT m.item_id
  FROM (SELECT q.qid, b.item_id
          FROM unnest(%(qids)s::int[], %(hashes)s::bigint[], %(langs)s::text[], %(needs)s::int[])
               AS q(qid, hash, lang, need)
          JOIN neardup_bands b ON b.hash = q.hash AND b.lang = q.lang
                              AND b.partition_hour >= %(window_start)s AND b.partition_hour < %(hour)s
         GROUP BY q.qid, b.item_id
        HAVING count(*) >= min(q.need)) AS m

-- name: neardup_candidate_items
-- The canonical ones among the band candidates, in the hour's languages (neardup_window_items' columns).
SELECT i.id, i.title, coalesce(i.lang, s.language) AS lang, i.url, i.canonical_url,
       s.syndicator, i.published_at, true AS is_canonical
  FROM items i
  JOIN sources s ON s.id = i.source_id
  LEFT JOIN item_duplicates d ON d.item_id = i.id
 WHERE i.id = ANY(%(ids)s)
   AND i.partition_hour >= %(window_start)s AND i.partition_hour < %(hour)s
   AND coalesce(i.lang, s.language) = ANY(%(langs)s)
   AND d.item_id IS NULL
 ORDER BY i.id

-- name: neardup_window_canonical_counts
-- Canonical items of the window per language (in the hour's languages): a language whose window and
-- hour fit one exhaustive bucket compares every pair, as the whole-window path does.
SELECT coalesce(i.lang, s.language) AS lang, count(*)
  FROM items i
  JOIN sources s ON s.id = i.source_id
  LEFT JOIN item_duplicates d ON d.item_id = i.id
 WHERE i.partition_hour >= %(window_start)s AND i.partition_hour < %(hour)s
   AND coalesce(i.lang, s.language) = ANY(%(langs)s)
   AND d.item_id IS NULL
 GROUP BY 1

-- name: neardup_band_counts
-- How many canonical items of the window carry each given band (lead-token buckets: is one small?).
SELECT q.lang, q.hash, count(*)
  FROM unnest(%(hashes)s::bigint[], %(langs)s::text[]) AS q(hash, lang)
  JOIN neardup_bands b ON b.hash = q.hash AND b.lang = q.lang
                      AND b.partition_hour >= %(window_start)s AND b.partition_hour < %(hour)s
  LEFT JOIN item_duplicates d ON d.item_id = b.item_id
 WHERE d.item_id IS NULL
 GROUP BY q.lang, q.hash
