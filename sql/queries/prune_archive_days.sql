-- Retention: forget the archived front pages of days before %(cutoff)s (one batch of %(limit)s); the
-- caller removes their pages, whose output directory, language and day are returned.
WITH old AS (
    SELECT output_dir, lang, day FROM publish_archive_days
     WHERE day < (%(cutoff)s AT TIME ZONE 'UTC')::date
     ORDER BY output_dir, lang, day LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM publish_archive_days a USING old
     WHERE a.output_dir = old.output_dir AND a.lang = old.lang AND a.day = old.day
    RETURNING a.output_dir, a.lang, a.day, pg_column_size(a.*) AS bytes
)
SELECT count(*), coalesce(sum(bytes), 0),
       coalesce(array_agg(json_build_array(output_dir, lang, day::text)), '{}')
  FROM gone
