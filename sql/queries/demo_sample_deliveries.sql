-- Where the demo's sample readers' editions of the day went.
SELECT d.email, d.status, d.due_at, d.local_day, d.outbox_path, g.edition, cardinality(g.story_ids)
  FROM deliveries d
  LEFT JOIN digests g ON g.id = d.digest_id
 WHERE d.digest_date = %(day)s AND d.email = ANY(%(emails)s)
 ORDER BY d.due_at, d.email
