-- Retention: move llm_calls rows older than %(cutoff)s into llm_call_daily_totals (one batch of
-- %(limit)s), in one statement: a row is either still detailed or counted in its day's totals.
WITH old AS (
    SELECT id FROM llm_calls WHERE created_at < %(cutoff)s ORDER BY id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM llm_calls c USING old WHERE c.id = old.id
    RETURNING (c.created_at AT TIME ZONE 'UTC')::date AS day, c.task, c.model, c.status, c.tokens_in, c.tokens_out,
              c.tokens_cached, c.cost_usd, coalesce(c.latency_ms, 0) AS latency_ms, pg_column_size(c.*) AS bytes
), added AS (
    INSERT INTO llm_call_daily_totals AS t (day, task, model, status, calls, tokens_in, tokens_out, tokens_cached,
                                             cost_usd, latency_ms_sum)
    SELECT day, task, model, status, count(*), sum(tokens_in), sum(tokens_out), sum(tokens_cached), sum(cost_usd),
           sum(latency_ms)
      FROM gone GROUP BY day, task, model, status
    ON CONFLICT (day, task, model, status) DO UPDATE
       SET calls = t.calls + excluded.calls, tokens_in = t.tokens_in + excluded.tokens_in,
           tokens_out = t.tokens_out + excluded.tokens_out, tokens_cached = t.tokens_cached + excluded.tokens_cached,
           cost_usd = t.cost_usd + excluded.cost_usd, latency_ms_sum = t.latency_ms_sum + excluded.latency_ms_sum
    RETURNING 1
)
SELECT count(*), coalesce(sum(bytes), 0) FROM gone
