SELECT DISTINCT partition_hour FROM item_embeddings WHERE model = %s ORDER BY 1
