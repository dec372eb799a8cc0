UPDATE item_embeddings SET raw_embedding = embedding WHERE model = %s AND raw_embedding IS NULL
