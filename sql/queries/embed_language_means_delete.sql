DELETE FROM embedding_language_means WHERE model = %s
