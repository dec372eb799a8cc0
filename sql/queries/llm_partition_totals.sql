-- Token and cost totals of a partition's LLM calls (all materialisations of it), per task.
SELECT task, count(*) AS calls, count(*) FILTER (WHERE status <> 'ok') AS failed_calls,
       coalesce(sum(tokens_in), 0) AS tokens_in, coalesce(sum(tokens_out), 0) AS tokens_out,
       coalesce(sum(cost_usd), 0) AS cost_usd
  FROM llm_calls
 WHERE partition_hour = %(hour)s AND task = ANY(%(tasks)s)
 GROUP BY task
 ORDER BY task
