-- name: cluster_analyze_hour_tables
-- Fresh planner statistics for the tables the clustering transaction just wrote, before the
-- checks read the hour back: statistics taken before its commit see an empty hour, and a
-- 20,000-item hour's invariant check planned on them ran for minutes (bench/hour.py --scale 10).
ANALYZE story_items, stories, item_duplicates

-- name: cluster_attach
-- Memberships written by partition H (pass 1/3 attachments and pass 2 members) with what admitted
-- each one (neighbour for pass 2, threshold in force), one statement.
INSERT INTO story_items (item_id, story_id, pass, similarity, gap_hours, story_age_hours, via_item_id,
                         threshold, partition_hour)
SELECT u.item_id, u.story_id, u.pass, u.sim, u.gap, u.age, u.via, u.threshold, %(h)s
  FROM unnest(%(item_ids)s::text[], %(story_ids)s::text[], %(passes)s::smallint[],
              %(sims)s::real[], %(gaps)s::real[], %(ages)s::real[], %(vias)s::text[], %(thresholds)s::real[])
       AS u(item_id, story_id, pass, sim, gap, age, via, threshold)

-- name: cluster_check_considered
-- Embedded canonical items of H, and how many of them are in a story written by a partition other
-- than H (taken by a later hour's pass 2 before H was re-materialised).
SELECT count(*) AS embedded,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM story_items si
                                       WHERE si.item_id = e.item_id AND si.partition_hour <> %(h)s)) AS elsewhere
  FROM item_embeddings e
 WHERE e.model = %(model)s AND e.partition_hour >= %(h)s AND e.partition_hour < %(h_end)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = e.item_id)

-- name: cluster_check_invariants
-- Invariant figures for partition H's stories (asset checks). One row.
--  multi_story_items: H's articles (canonical or duplicate) that appear in more than one story
--  pass1_gate_violations: H's pass-1 attachments whose stored similarity / gap / age broke the gates,
--                         plus pass-3 attachments without a stored similarity >= story_threshold;
--                         an attachment whose stored threshold is below story_threshold (one
--                         across languages, stages/clustering/passes.py story_bar) is held to that
--                         threshold, never below story_threshold - cross_margin
--  age_violations: H's memberships (any pass) made after the story's maximum age
--  centroid_max_error: max L2 distance between a touched story's centroid and the avg of its
--                      `window` most recent members, recomputed here
WITH touched AS (
    SELECT DISTINCT si.story_id FROM story_items si WHERE si.partition_hour = %(h)s
)
SELECT
  (SELECT count(*) FROM (
       SELECT a.item_id FROM story_articles a
        WHERE a.item_id IN (SELECT si.item_id FROM story_items si WHERE si.partition_hour = %(h)s
                            UNION
                            SELECT d.item_id FROM item_duplicates d
                              JOIN story_items si ON si.item_id = d.canonical_item_id
                             WHERE si.partition_hour = %(h)s)
        GROUP BY a.item_id HAVING count(DISTINCT a.story_id) > 1) x)
      AS multi_story_items,
  (SELECT count(*) FROM story_items si
    WHERE si.partition_hour = %(h)s AND si.pass = 1
      AND (si.similarity < greatest(least(coalesce(si.threshold, %(story_threshold)s), %(story_threshold)s), %(story_threshold)s - %(cross_margin)s) - 1e-5 OR si.gap_hours > %(max_gap_hours)s + 1e-3
           OR si.similarity IS NULL OR si.gap_hours IS NULL))
  + (SELECT count(*) FROM story_items si
    WHERE si.partition_hour = %(h)s AND si.pass = 3
      AND (si.similarity < greatest(least(coalesce(si.threshold, %(story_threshold)s), %(story_threshold)s), %(story_threshold)s - %(cross_margin)s) - 1e-5 OR si.similarity IS NULL))
      AS pass1_gate_violations,
  (SELECT count(*) FROM story_items si
    WHERE si.partition_hour = %(h)s AND si.pass = 1 AND si.story_age_hours > %(story_max_age_hours)s + 1e-3)
      AS age_violations,
  (SELECT coalesce(max(s.centroid <-> (
              SELECT avg(r.embedding) FROM (
                  SELECT e.embedding FROM story_items si JOIN item_embeddings e
                      ON e.item_id = si.item_id AND e.model = s.model
                   WHERE si.story_id = s.id
                   ORDER BY e.published_at DESC, e.item_id DESC LIMIT %(window)s) r)), 0)
     FROM stories s JOIN touched t ON t.story_id = s.id)
      AS centroid_max_error,
  (SELECT coalesce(max(s.item_count), 0) FROM stories s JOIN touched t ON t.story_id = s.id)
      AS largest_touched

-- name: cluster_check_pass2_edges
-- Pairs of members of H's pass-2 stories with cosine >= item_threshold, or >= item_threshold minus
-- cross_language_margin (cross_threshold) when the two are in different known languages (ids
-- only), so Python can check each story is connected at the threshold. Stories are small; this is
-- a per-story self-join. (Pass 2 keeps a cross-language edge below item_threshold only where the
-- two items' anchors agree, shared/text/anchors.py joins_across_languages; this check only asks for
-- the cosine.)
SELECT a.story_id, a.item_id, b.item_id
  FROM story_items a
  JOIN story_items b ON b.story_id = a.story_id AND b.item_id > a.item_id AND b.partition_hour = %(h)s AND b.pass = 2
  JOIN item_embeddings ea ON ea.item_id = a.item_id AND ea.model = %(model)s
  JOIN item_embeddings eb ON eb.item_id = b.item_id AND eb.model = %(model)s
  JOIN items ia ON ia.id = a.item_id
  JOIN items ib ON ib.id = b.item_id
 WHERE a.partition_hour = %(h)s AND a.pass = 2
   AND 1 - (ea.embedding <=> eb.embedding) >= CASE
           WHEN lower(split_part(coalesce(ia.lang, ''), '-', 1)) <> ''
            AND lower(split_part(coalesce(ib.lang, ''), '-', 1)) <> ''
            AND lower(split_part(coalesce(ia.lang, ''), '-', 1)) <> lower(split_part(coalesce(ib.lang, ''), '-', 1))
           THEN %(cross_threshold)s ELSE %(threshold)s END - 1e-5

-- name: cluster_create_stories
-- New pass-2 stories with their aggregates computed from the members passed in (the rules of
-- cluster_recompute: centroid = avg of the `window` most recent members, ties by item id;
-- representative = the member nearest it, ties by item id), so each centroid enters the HNSW index
-- once. A story H founded before that later hours extended (same deterministic id) conflicts: its
-- row is kept, and the caller recomputes it from all its members. RETURNING: ids that conflicted.
WITH m AS MATERIALIZED (
    SELECT u.story_id, e.item_id, e.embedding, e.published_at,
           row_number() OVER (PARTITION BY u.story_id ORDER BY e.published_at DESC, e.item_id DESC) AS recency
      FROM unnest(%(member_story_ids)s::text[], %(member_ids)s::text[]) AS u(story_id, item_id)
      JOIN item_embeddings e ON e.item_id = u.item_id AND e.model = %(model)s
), agg AS MATERIALIZED (
    SELECT story_id, count(*) AS n, min(published_at) AS first_pub, max(published_at) AS latest_pub,
           avg(embedding) FILTER (WHERE recency <= %(window)s) AS centroid
      FROM m GROUP BY story_id
), representative AS (
    -- one pass over the members (a correlated subquery per story would scan them all per story)
    SELECT DISTINCT ON (m.story_id) m.story_id, m.item_id
      FROM m JOIN agg a ON a.story_id = m.story_id
     ORDER BY m.story_id, m.embedding <=> a.centroid, m.item_id
)
INSERT INTO stories (id, model, created_partition, updated_partition, first_published_at,
                     latest_published_at, centroid, item_count, representative_item_id, searchable)
SELECT a.story_id, %(model)s, %(h)s, %(h)s, a.first_pub, a.latest_pub, a.centroid, a.n, r.item_id,
       -- migration 035: searchable while the latest item is at or after the model's boundary
       a.latest_pub >= coalesce((SELECT b.stories_from FROM cluster_recent_state b WHERE b.model = %(model)s),
                                '-infinity')
  FROM agg a JOIN representative r ON r.story_id = a.story_id
 ORDER BY a.story_id
ON CONFLICT (id) DO UPDATE SET updated_partition = EXCLUDED.updated_partition, updated_at = now()
RETURNING id, (xmax <> 0) AS existed

-- name: cluster_explain_decisions
-- What each hour decided for a story (`newsdedup explain`): its edges, cut groups and vetoes.
SELECT partition_hour, edges, cut_groups, vetoes FROM story_decisions
WHERE story_id = %s ORDER BY partition_hour

-- name: cluster_explain_members
-- `newsdedup explain`: every article of a story (duplicates follow their canonical item) with what
-- admitted it, in order of admission (partition, pass, then publication), whose vector it shares, and
-- what the article stage found on its page (status, reason, words, the page's first paragraph).
SELECT a.item_id, i.title, i.lang, i.source_id, i.published_at,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.pass END,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.similarity END,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.threshold END,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.gap_hours END,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.via_item_id END,
       CASE WHEN a.is_duplicate THEN a.canonical_item_id END,
       si.partition_hour,
       -- a canonical item whose embedded text an earlier item had shares that item's vector (one
       -- cache row): the first item with the text, unless that is this one
       (SELECT NULLIF(first.item_id, a.item_id)
          FROM (SELECT o.item_id
                  FROM item_embeddings e
                  JOIN item_embeddings o ON o.model = e.model AND o.text_hash = e.text_hash
                 WHERE NOT a.is_duplicate AND e.item_id = a.item_id
                   AND e.model = (SELECT m.model FROM embedding_models m WHERE m.active)
                 ORDER BY o.partition_hour, o.published_at NULLS LAST, o.item_id
                 LIMIT 1) first),
       art.status, art.reason, art.word_count, art.lead
  FROM story_articles a
  JOIN story_items si ON si.item_id = a.canonical_item_id
  JOIN items i ON i.id = a.item_id
  LEFT JOIN article_texts art ON art.item_id = a.item_id
 WHERE a.story_id = %(id)s
 ORDER BY si.partition_hour, si.pass, a.canonical_item_id, a.is_duplicate, i.published_at, a.item_id

-- name: cluster_explain_story
-- `newsdedup explain`: the story by id or unique id prefix, with its representative headline.
SELECT s.id, r.title, s.created_partition, s.item_count
  FROM stories s
  LEFT JOIN items r ON r.id = s.representative_item_id
 WHERE s.id = %(id)s OR (s.id LIKE %(prefix)s AND NOT EXISTS (SELECT 1 FROM stories x WHERE x.id = %(id)s))
 LIMIT 2

-- name: cluster_item_published
-- Publication time of these items.
SELECT item_id, published_at FROM item_embeddings WHERE model = %s AND item_id = ANY(%s)

-- name: cluster_item_texts
-- Headline, summary and language of items (the anchor check, shared/text/anchors.py).
SELECT i.id, i.title, i.summary, i.lang
  FROM items i
 WHERE i.id = ANY(%(ids)s)

-- name: cluster_new_items
-- Canonical embedded items of partition H not yet in a story (a later partition's pass 2 may
-- already have taken one when H is re-materialised out of order), with their published time.
SELECT e.item_id, e.published_at
  FROM item_embeddings e
 WHERE e.model = %(model)s AND e.partition_hour >= %(h)s AND e.partition_hour < %(h_end)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = e.item_id)
   AND NOT EXISTS (SELECT 1 FROM story_items si WHERE si.item_id = e.item_id)
 ORDER BY e.item_id

-- name: cluster_pass1_any_candidate
-- Is there any story pass 1 could attach an item published in [lo + gap, hi - gap] to? (the
-- latest-published gate of cluster_pass1_knn, over the whole batch; stories_latest_idx)
SELECT 1
  FROM stories s
 WHERE s.model = %(model)s AND s.created_partition < %(h)s
   AND s.latest_published_at >= %(lo)s AND s.latest_published_at <= %(hi)s
 LIMIT 1

-- name: cluster_pass1_knn
-- Pass 1: a batch of new items against recent story centroids (KNN on the per-model HNSW index;
-- iterative scan keeps the time filters from silently dropping neighbours). Gates: cosine >=
-- story_threshold, |item.published_at - story.latest_published_at| <= max_gap_hours, story age at
-- the item's time (item.published_at - story.first_published_at) <= story_max_age_hours.
-- Only stories that existed before H (created_partition < H) are candidates. Best match per item,
-- ties broken by story id. {searchable}: `AND s.searchable` on the HNSW path (the partial index's
-- predicate, migration 035), nothing on the exact path that items published before the boundary
-- take (stages/clustering/store.py pass1_matches).
SELECT DISTINCT ON (q.item_id)
       q.item_id, n.story_id, n.sim, n.gap_hours, n.age_hours
  FROM item_embeddings q
  JOIN LATERAL (
        SELECT s.id AS story_id,
               1 - ({centroid} <=> {q_emb}) AS sim,
               abs(extract(epoch FROM q.published_at - s.latest_published_at)) / 3600.0 AS gap_hours,
               extract(epoch FROM q.published_at - s.first_published_at) / 3600.0 AS age_hours
          FROM stories s
         WHERE s.model = %(model)s {searchable}
           AND s.created_partition < %(h)s
           AND s.latest_published_at >= q.published_at - make_interval(secs => %(max_gap_s)s)
           AND s.latest_published_at <= q.published_at + make_interval(secs => %(max_gap_s)s)
           AND s.first_published_at >= q.published_at - make_interval(secs => %(max_age_s)s)
         ORDER BY {centroid} <=> {q_emb}
         LIMIT %(k)s
       ) n ON true
 WHERE q.model = %(model)s AND q.item_id = ANY(%(ids)s)
   AND n.sim >= %(threshold)s
 ORDER BY q.item_id, n.sim DESC, n.story_id

-- name: cluster_pass2_knn
-- Pass 2: H's items against the window's still-unassigned canonical items: ingested in a
-- partition in [window_start, h_end) (never a later one, so a backfill sees what the hourly run
-- saw), |published gap| <= max_gap_hours, not in a story, not a duplicate. Returns edges with
-- cosine >= item_threshold and the neighbour's published time; Python gets ids, similarities and
-- times, never vectors. Both sides come from cluster_recent_items (migration 033), whose HNSW
-- graph spans the recent window only, however long the history in item_embeddings.
-- freed / attached: empty in the clustering transaction itself. A second connection reading the
-- snapshot the transaction started from (stages/clustering/store.py SnapshotReader) passes the items
-- whose memberships the transaction removed (undo) and those pass 1 attached, so it sees the
-- same "not in a story" as the transaction.
SELECT q.item_id, n.item_id, n.sim, n.published_at
  FROM cluster_recent_items q
  JOIN LATERAL (
        SELECT c.item_id, 1 - ({c_emb} <=> {q_emb}) AS sim, c.published_at
          FROM cluster_recent_items c
         WHERE c.model = %(model)s
           AND c.partition_hour >= %(window_start)s AND c.partition_hour < %(h_end)s
           AND c.published_at >= q.published_at - make_interval(secs => %(max_gap_s)s)
           AND c.published_at <= q.published_at + make_interval(secs => %(max_gap_s)s)
           AND c.item_id <> q.item_id
           AND (c.item_id = ANY(%(freed)s)
                OR NOT EXISTS (SELECT 1 FROM story_items si WHERE si.item_id = c.item_id))
           AND c.item_id <> ALL(%(attached)s)
           AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = c.item_id)
         ORDER BY {c_emb} <=> {q_emb}
         LIMIT %(k)s
       ) n ON true
 WHERE q.model = %(model)s AND q.item_id = ANY(%(ids)s)
   AND n.sim >= %(threshold)s

-- name: cluster_pass2_members
-- The memberships pass 2 of hour H wrote (the invariant checks compare them with its edges).
SELECT story_id, item_id FROM story_items WHERE partition_hour = %s AND pass = 2

-- name: cluster_pass3_nearest
-- Pass 3: for a batch of H's leftover items, the nearest of H's new stories by cosine to the
-- centroid over ALL the story's pass-2 members (avg; cosine is scale-invariant). Groups arrive as
-- (group index, member id) arrays; ties -> lowest group index. MATERIALIZED: the centroids are
-- computed once, not once per item.
WITH centroids AS MATERIALIZED (
    SELECT u.g, avg(e.embedding) AS c
      FROM unnest(%(groups)s::int[], %(members)s::text[]) AS u(g, item_id)
      JOIN item_embeddings e ON e.item_id = u.item_id AND e.model = %(model)s
     GROUP BY u.g
)
SELECT q.item_id, n.g, n.sim
  FROM item_embeddings q
  JOIN LATERAL (
        SELECT c.g, 1 - (c.c <=> q.embedding) AS sim
          FROM centroids c
         ORDER BY c.c <=> q.embedding, c.g
         LIMIT 1
       ) n ON true
 WHERE q.model = %(model)s AND q.item_id = ANY(%(ids)s)

-- name: cluster_recent_from_lock
-- The recent mirror's boundary for the model, locked while sync_recent moves it.
SELECT recent_from FROM cluster_recent_state WHERE model = %s FOR UPDATE

-- name: cluster_recent_load
-- Mirror the item_embeddings rows of partitions [lo, hi) (hi NULL: all from lo on) into
-- cluster_recent_items, after the boundary moved back to lo. Rows already there are left alone.
INSERT INTO cluster_recent_items (item_id, model, embedding, partition_hour, published_at)
SELECT e.item_id, e.model, e.embedding, e.partition_hour, e.published_at
  FROM item_embeddings e
 WHERE e.model = %(model)s AND e.partition_hour >= %(lo)s
   AND (%(hi)s::timestamptz IS NULL OR e.partition_hour < %(hi)s::timestamptz)
ON CONFLICT (item_id, model) DO NOTHING

-- name: cluster_recent_prune
-- Drop mirrored vectors older than the new boundary.
DELETE FROM cluster_recent_items WHERE model = %s AND partition_hour < %s

-- name: cluster_recent_state_set
-- Move the per-model boundary of cluster_recent_items (the caller holds the row lock, see
-- stages/clustering/store.py sync_recent; the mirror trigger of migration 033 reads it FOR SHARE).
INSERT INTO cluster_recent_state (model, recent_from) VALUES (%(model)s, %(recent_from)s)
ON CONFLICT (model) DO UPDATE SET recent_from = EXCLUDED.recent_from

-- name: cluster_recent_stories_from
-- The model's searchable boundary: stories whose latest item is before it are not searchable.
SELECT stories_from FROM cluster_recent_state WHERE model = %s

-- name: cluster_recent_stories_from_set
-- Move the searchable boundary (only ever forward: see stages/clustering/store.py sync_stories).
UPDATE cluster_recent_state SET stories_from = %s WHERE model = %s

-- name: cluster_recompute
-- Story aggregates from the members, in SQL: centroid = avg of the `centroid_window` most recent
-- members' vectors (ties by item id), first/latest published, count, last partition that wrote a
-- member, and the representative = the member nearest the new centroid (ties by item id).
WITH agg AS (
    SELECT si.story_id, count(*) AS n, min(e.published_at) AS first_pub, max(e.published_at) AS latest_pub,
           max(si.partition_hour) AS last_partition
      FROM story_items si
      JOIN item_embeddings e ON e.item_id = si.item_id AND e.model = %(model)s
     WHERE si.story_id = ANY(%(ids)s)
     GROUP BY si.story_id
), cent AS (
    SELECT a.story_id,
           (SELECT avg(r.embedding)
              FROM (SELECT e.embedding
                      FROM story_items si
                      JOIN item_embeddings e ON e.item_id = si.item_id AND e.model = %(model)s
                     WHERE si.story_id = a.story_id
                     ORDER BY e.published_at DESC, e.item_id DESC
                     LIMIT %(window)s) r) AS centroid
      FROM agg a
)
UPDATE stories s
   SET centroid = c.centroid, item_count = a.n, first_published_at = a.first_pub,
       latest_published_at = a.latest_pub, updated_partition = a.last_partition, updated_at = now(),
       -- migration 035: searchable while the latest item is at or after the model's boundary
       searchable = a.latest_pub >= coalesce(
           (SELECT r.stories_from FROM cluster_recent_state r WHERE r.model = %(model)s), '-infinity'),
       representative_item_id = (
           SELECT si.item_id
             FROM story_items si
             JOIN item_embeddings e ON e.item_id = si.item_id AND e.model = %(model)s
            WHERE si.story_id = s.id
            ORDER BY e.embedding <=> c.centroid, si.item_id
            LIMIT 1)
  FROM agg a JOIN cent c ON c.story_id = a.story_id
 WHERE s.id = a.story_id

-- name: cluster_record_decisions
-- Pass-2 explanation rows of H: one per story founded, its edges and cut groups as JSON arrays.
INSERT INTO story_decisions (story_id, partition_hour, edges, cut_groups)
SELECT u.story_id, %(h)s, u.edges, u.cut_groups
  FROM unnest(%(story_ids)s::text[], %(edges)s::jsonb[], %(cut_groups)s::jsonb[]) AS u(story_id, edges, cut_groups)

-- name: cluster_record_vetoes
-- Anchor vetoes of H, one row per story: added to the story's pass-2 row of H or a new row.
INSERT INTO story_decisions (story_id, partition_hour, edges, cut_groups, vetoes)
SELECT u.story_id, %(h)s, '[]'::jsonb, '[]'::jsonb, u.vetoes
  FROM unnest(%(story_ids)s::text[], %(vetoes)s::jsonb[]) AS u(story_id, vetoes)
ON CONFLICT (story_id, partition_hour) DO UPDATE SET vetoes = story_decisions.vetoes || EXCLUDED.vetoes

-- name: cluster_story_member_texts
-- The most recent members (up to %(limit)s) of stories, with headline, summary and language: the
-- anchors a pass-1 / pass-3 candidate is checked against (shared/text/anchors.py).
SELECT s.story_id, m.id, m.title, m.summary, m.lang
  FROM unnest(%(ids)s::text[]) AS s(story_id)
  JOIN LATERAL (
        SELECT i.id, i.title, i.summary, i.lang
          FROM story_items si
          JOIN items i ON i.id = si.item_id
         WHERE si.story_id = s.story_id
         ORDER BY i.published_at DESC NULLS LAST, i.id
         LIMIT %(limit)s
       ) m ON true

-- name: cluster_story_summary
-- One row per story for the asset's markdown preview: size, languages and sources over every
-- article (duplicates included, via story_articles), the representative headline.
SELECT s.id, s.item_count,
       (SELECT count(*) FROM story_articles a WHERE a.story_id = s.id) AS articles,
       (SELECT string_agg(DISTINCT coalesce(i.lang, '?'), ',')
          FROM story_articles a JOIN items i ON i.id = a.item_id WHERE a.story_id = s.id) AS languages,
       (SELECT string_agg(DISTINCT i.source_id, ',')
          FROM story_articles a JOIN items i ON i.id = a.item_id WHERE a.story_id = s.id) AS sources,
       r.title AS headline, s.created_partition
  FROM stories s
  LEFT JOIN items r ON r.id = s.representative_item_id
 WHERE s.id = ANY(%(ids)s)
 ORDER BY s.item_count DESC, s.id

-- name: cluster_undo_decisions
-- Re-materialising H (or, with later_partitions = reset, every partition after H): remove the
-- explanation rows those partitions wrote before redoing them (stories deleted take theirs along).
DELETE FROM story_decisions
 WHERE partition_hour = %(h)s OR (%(later)s AND partition_hour > %(h)s)

-- name: cluster_undo_later
-- Recomputing history (later_partitions = reset): remove the memberships written by partitions
-- after H, so H and the hours after it are rebuilt exactly as the first time, in time order.
-- Returns the stories they belonged to (whose aggregates must be recomputed) and the items freed.
DELETE FROM story_items si
 USING stories s
 WHERE si.partition_hour > %(h)s AND s.id = si.story_id AND s.model = %(model)s
RETURNING si.story_id, si.item_id

-- name: cluster_undo_later_stories
-- ... and the stories those partitions created (now without members).
DELETE FROM stories s
 WHERE s.model = %(model)s AND s.created_partition > %(h)s
   AND NOT EXISTS (SELECT 1 FROM story_items si WHERE si.story_id = s.id)
RETURNING s.id

-- name: cluster_undo_partition
-- Re-materialising partition H: remove H's own effects before redoing them (same transaction).
-- 1) memberships written by H (pass-1 attachments to older stories, pass-2 founders and members);
--    returns the stories they belonged to (whose aggregates must be recomputed) and the items freed.
DELETE FROM story_items si
 USING stories s
 WHERE si.partition_hour = %(h)s AND s.id = si.story_id AND s.model = %(model)s
RETURNING si.story_id, si.item_id

-- name: cluster_undo_stories
-- 2) stories created by H that no longer have any member. A story created by H that later
--    partitions attached items to keeps its row (same deterministic id if H recreates it), so
--    re-materialising H does not destroy what later hours built on it.
DELETE FROM stories s
 WHERE s.model = %(model)s AND s.created_partition = %(h)s
   AND NOT EXISTS (SELECT 1 FROM story_items si WHERE si.story_id = s.id)
RETURNING s.id

-- name: cluster_unsearchable_behind
-- Clear the searchable flag of the stories behind the boundary; returns how many.
UPDATE stories SET searchable = false WHERE model = %s AND searchable AND latest_published_at < %s

-- name: index_exists
-- Whether an index of this name exists.
SELECT 1 FROM pg_class WHERE relname = %s AND relkind = 'i'

-- name: snapshot_reader_begin
-- A reader of another transaction's snapshot must be REPEATABLE READ (SET TRANSACTION SNAPSHOT needs it).
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY
