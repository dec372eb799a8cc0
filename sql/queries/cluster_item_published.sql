SELECT item_id, published_at FROM item_embeddings WHERE model = %s AND item_id = ANY(%s)
