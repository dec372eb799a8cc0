-- The demo's line about article pages: rows by status, and the words kept.
SELECT count(*) FILTER (WHERE attempts > 0), count(*) FILTER (WHERE status = 'ok'),
       count(*) FILTER (WHERE status = 'failed'), coalesce(sum(word_count) FILTER (WHERE status = 'ok'), 0)
  FROM article_texts
