-- Centring, step 0: forget this partition's per-language sums (they are rebuilt next).
DELETE FROM embedding_language_means
 WHERE model = %(model)s AND partition_hour >= %(start)s AND partition_hour < %(end)s
