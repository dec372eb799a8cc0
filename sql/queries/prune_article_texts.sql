-- Retention: drop the kept text and page of article rows whose hour is older than %(cutoff)s (one
-- batch of %(limit)s), with the feed bodies' age. The row stays (status, word count, language,
-- times, byline), marked text_pruned_at.
WITH old AS (
    SELECT item_id, coalesce(pg_column_size(text_gzip), 0) + coalesce(pg_column_size(html_gzip), 0)
           + coalesce(pg_column_size(lead), 0) AS bytes
      FROM article_texts
     WHERE fetched_hour < %(cutoff)s
       AND (text_gzip IS NOT NULL OR html_gzip IS NOT NULL)
     ORDER BY fetched_hour
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
), done AS (
    UPDATE article_texts a SET text_gzip = NULL, html_gzip = NULL, lead = NULL, text_pruned_at = now()
      FROM old WHERE a.item_id = old.item_id
    RETURNING old.bytes
)
SELECT count(*), coalesce(sum(bytes), 0) FROM done
