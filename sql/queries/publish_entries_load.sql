-- What earlier runs published for these stories in this language.
SELECT story_id, entry_id, published_at, updated_at, fingerprint, page_hash
  FROM publish_entries
 WHERE lang = %(lang)s AND story_id = ANY(%(story_ids)s)
