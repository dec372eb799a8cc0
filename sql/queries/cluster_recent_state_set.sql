-- Move the per-model boundary of cluster_recent_items (the caller holds the row lock, see
-- stages/clustering/store.py sync_recent; the mirror trigger of migration 033 reads it FOR SHARE).
INSERT INTO cluster_recent_state (model, recent_from) VALUES (%(model)s, %(recent_from)s)
ON CONFLICT (model) DO UPDATE SET recent_from = EXCLUDED.recent_from
