-- One row per HTTP attempt, or per reused answer (cached = true, no tokens, no cost)
-- (newsdedup_dagster/shared/models/client.py: PostgresCallRecorder).
INSERT INTO llm_calls (task, model, story_id, event_id, partition_hour, attempt,
                       tokens_in, tokens_out, tokens_cached, cost_usd, latency_ms, status, error,
                       cached, cache_key)
VALUES (%(task)s, %(model)s, %(story_id)s, %(event_id)s, %(partition_hour)s, %(attempt)s,
        %(tokens_in)s, %(tokens_out)s, %(tokens_cached)s, %(cost_usd)s, %(latency_ms)s, %(status)s, %(error)s,
        %(cached)s, %(cache_key)s)
