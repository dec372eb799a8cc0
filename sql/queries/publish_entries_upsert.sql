-- Remember an entry's id and stamps; published_at, entry_id and first_partition never change.
INSERT INTO publish_entries (story_id, lang, entry_id, published_at, updated_at, fingerprint, page_hash,
                             article_count, first_partition, updated_partition)
SELECT * FROM unnest(%(story_ids)s::text[], %(langs)s::text[], %(entry_ids)s::text[], %(published)s::timestamptz[],
                     %(updated)s::timestamptz[], %(fingerprints)s::text[], %(page_hashes)s::text[],
                     %(article_counts)s::int[], %(partitions)s::timestamptz[], %(partitions)s::timestamptz[])
ON CONFLICT (story_id, lang) DO UPDATE
   SET updated_at = EXCLUDED.updated_at, fingerprint = EXCLUDED.fingerprint, page_hash = EXCLUDED.page_hash,
       article_count = EXCLUDED.article_count,
       updated_partition = CASE WHEN publish_entries.fingerprint IS DISTINCT FROM EXCLUDED.fingerprint
                                THEN EXCLUDED.updated_partition ELSE publish_entries.updated_partition END
 WHERE publish_entries.fingerprint IS DISTINCT FROM EXCLUDED.fingerprint
    OR publish_entries.page_hash IS DISTINCT FROM EXCLUDED.page_hash
