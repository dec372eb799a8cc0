-- The source alerts open now: which sources were last reported failing or quiet.
SELECT source_id, state, since, detail, raised_at
  FROM source_alerts
 ORDER BY source_id
