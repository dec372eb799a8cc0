SELECT item_id, embedding::text FROM item_embeddings WHERE model = %s
