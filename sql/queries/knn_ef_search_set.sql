SET LOCAL hnsw.ef_search = {}
