-- One definition of "the outlet an article counts as", for every query that lists or counts a
-- story's sources (site, feeds, digest): the item's attributed outlet (items.outlet, set at
-- ingest); for rows stored before that column, the publisher host of its link (lower-case,
-- without www./m./amp./mobile.); for a link-less item, its feed. An aggregator's copy of a
-- Reuters article and Reuters' own item are then one outlet.
CREATE OR REPLACE FUNCTION item_outlet(outlet text, url text, source_id text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(
           nullif(outlet, ''),
           nullif(regexp_replace(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^:/?#]+)')),
                                 '^(www|m|amp|mobile)\.', ''), ''),
           'source:' || source_id)
$$;
