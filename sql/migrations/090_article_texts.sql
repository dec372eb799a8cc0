-- The article stage (newsdedup_dagster/stages/articles/): each new canonical item's page fetched once, its
-- main text kept, or why it has none. A page never changes its item: the item's id, outlet and URL
-- stay in `items`; what the page says of itself (canonical link, language, times) is kept here.
CREATE TABLE IF NOT EXISTS article_texts (
    item_id        text PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    status         text NOT NULL CHECK (status IN ('ok', 'failed', 'deferred')),
    -- why there is no text: robots, robots_unreachable, paywall, not_html, too_large, timeout,
    -- refused_address, redirect_refused, http_error, http_error_retryable, retry_after, fetch_error,
    -- extraction_empty, extraction_failed, hour_budget (deferred)
    reason         text,
    detail         text,
    url            text NOT NULL,              -- the address requested (the item's link)
    final_url      text,                       -- after redirects
    http_status    integer,
    text_gzip      bytea,                      -- main text, paragraphs separated by newlines, gzip
    text_chars     integer,
    lead           text,                       -- first paragraph that is not the headline (<= 1000 chars)
    word_count     integer,
    language       text,                       -- of the page's text, which may differ from the feed's
    published_at   timestamptz,                -- as the page states them
    updated_at     timestamptz,
    byline         text,
    canonical_url  text,                       -- the page's own rel=canonical / og:url, never applied to the item
    encoding       text,
    html_gzip      bytea,                      -- only with NEWSDEDUP_ARTICLES_KEEP_HTML
    attempts       integer NOT NULL DEFAULT 0, -- hours in which the page was requested
    fetched_hour   timestamptz NOT NULL,       -- the hour of the last attempt (or deferral)
    fetched_at     timestamptz NOT NULL DEFAULT now(),
    text_pruned_at timestamptz                 -- retention removed the text and page
);
CREATE INDEX IF NOT EXISTS article_texts_hour_idx ON article_texts (fetched_hour);
CREATE INDEX IF NOT EXISTS article_texts_kept_idx ON article_texts (fetched_hour)
    WHERE text_gzip IS NOT NULL OR html_gzip IS NOT NULL;

-- robots.txt per origin (scheme://host:port) with its expiry, and a host's Retry-After.
CREATE TABLE IF NOT EXISTS article_robots (
    origin      text PRIMARY KEY,
    status      text NOT NULL CHECK (status IN ('rules', 'allow_all', 'unreachable')),
    body        text,
    detail      text,
    fetched_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    not_before  timestamptz
);
