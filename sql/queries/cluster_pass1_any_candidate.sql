-- Is there any story pass 1 could attach an item published in [lo + gap, hi - gap] to? (the
-- latest-published gate of cluster_pass1_knn.sql, over the whole batch; stories_latest_idx)
SELECT 1
  FROM stories s
 WHERE s.model = %(model)s AND s.created_partition < %(h)s
   AND s.latest_published_at >= %(lo)s AND s.latest_published_at <= %(hi)s
 LIMIT 1
