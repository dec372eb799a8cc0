-- Token and cost totals of a partition's LLM calls (all materialisations of it), per task;
-- reused answers (cached) are counted apart and cost nothing.
SELECT task, count(*) FILTER (WHERE NOT cached) AS calls,
       count(*) FILTER (WHERE NOT cached AND status <> 'ok') AS failed_calls,
       count(*) FILTER (WHERE cached) AS reused,
       coalesce(sum(tokens_in), 0) AS tokens_in, coalesce(sum(tokens_out), 0) AS tokens_out,
       coalesce(sum(cost_usd), 0) AS cost_usd
  FROM llm_calls
 WHERE partition_hour = %(hour)s AND task = ANY(%(tasks)s)
 GROUP BY task
 ORDER BY task
