-- Which of these text hashes the cache already holds for the model.
SELECT text_hash FROM embedding_cache WHERE model = %(model)s AND text_hash = ANY(%(hashes)s)
