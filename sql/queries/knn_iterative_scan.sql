SET LOCAL hnsw.iterative_scan = relaxed_order
