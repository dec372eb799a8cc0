-- newsdedup schema: the whole pipeline, so later stages only add columns.
-- Applied once, in order, under an advisory lock (newsdedup_dagster/shared/db/migrations.py: migrate()).
-- Vector columns are untyped `vector` because the dimension belongs to the
-- configured embedding model (recorded in embedding_models); HNSW indexes are
-- per-model partial expression indexes with a cast, created when a model is
-- registered (see sql/queries/embedding_create_index.sql).

CREATE EXTENSION IF NOT EXISTS vector;

-- ---------------------------------------------------------------- sources
CREATE TABLE IF NOT EXISTS sources (
    id             text PRIMARY KEY,
    name           text NOT NULL,
    feed_url       text NOT NULL UNIQUE,
    language       text NOT NULL,
    country        text,
    syndicator     boolean NOT NULL DEFAULT false,
    enabled        boolean NOT NULL DEFAULT true,
    replay_file    text,
    -- conditional GET validators, updated independently
    etag           text,
    last_modified  text,
    first_seen_at  timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    disabled_at    timestamptz
);

-- ------------------------------------------------------ raw feed archive
-- Every fetch, including failures and 304s. A backfill of a past hour
-- re-parses these bodies instead of refetching today's feed.
CREATE TABLE IF NOT EXISTS feed_fetches (
    id              bigserial PRIMARY KEY,
    source_id       text NOT NULL REFERENCES sources(id),
    partition_hour  timestamptz NOT NULL,
    mode            text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'replay')),
    url             text NOT NULL,
    final_url       text,
    fetched_at      timestamptz NOT NULL DEFAULT now(),
    status          text NOT NULL CHECK (status IN ('ok', 'not_modified', 'error')),
    http_status     integer,
    elapsed_ms      integer,
    attempts        integer NOT NULL DEFAULT 1,
    etag            text,
    last_modified   text,
    content_type    text,
    error           text,
    body_gzip       bytea,
    body_bytes      integer,
    parse_error     text,
    items_parsed    integer
);
CREATE INDEX IF NOT EXISTS feed_fetches_partition_idx ON feed_fetches (partition_hour, source_id);

-- ------------------------------------------------------------------ items
-- id = hash of the canonical URL; partition_hour = the hour it was first ingested.
CREATE TABLE IF NOT EXISTS items (
    id              text PRIMARY KEY,
    canonical_url   text NOT NULL UNIQUE,
    url             text NOT NULL,
    guid            text,
    title           text NOT NULL,
    summary         text NOT NULL DEFAULT '',
    content         text,
    author          text,
    lang            text,
    lang_origin     text,            -- entry | feed | source | detected
    published_at    timestamptz NOT NULL,
    date_flag       text,            -- null | missing | future_clamped | too_old_clamped
    partition_hour  timestamptz NOT NULL,
    source_id       text NOT NULL REFERENCES sources(id),   -- first source seen
    fetch_id        bigint REFERENCES feed_fetches(id) ON DELETE SET NULL,
    ingested_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS items_partition_idx ON items (partition_hour);
CREATE INDEX IF NOT EXISTS items_published_idx ON items (published_at);

-- The same article from several sources is one item with several sources.
CREATE TABLE IF NOT EXISTS item_sources (
    item_id         text NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    source_id       text NOT NULL REFERENCES sources(id),
    url             text NOT NULL,
    guid            text,
    fetch_id        bigint REFERENCES feed_fetches(id) ON DELETE SET NULL,
    partition_hour  timestamptz NOT NULL,
    first_seen_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (item_id, source_id)
);

-- ------------------------------------------------------------- duplicates
-- A duplicate points at its canonical item; it is never embedded itself.
CREATE TABLE IF NOT EXISTS item_duplicates (
    item_id            text PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    canonical_item_id  text NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    rule               text NOT NULL CHECK (rule IN ('url', 'exact', 'near')),
    similarity         real,
    partition_hour     timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    CHECK (item_id <> canonical_item_id)
);
CREATE INDEX IF NOT EXISTS item_duplicates_canonical_idx ON item_duplicates (canonical_item_id);
CREATE INDEX IF NOT EXISTS item_duplicates_partition_idx ON item_duplicates (partition_hour);

-- ------------------------------------------------------------- embeddings
CREATE TABLE IF NOT EXISTS embedding_models (
    model        text PRIMARY KEY,        -- e.g. use:multilingual-v3, e5:small-q4, openai:text-embedding-3-small@1536
    provider     text NOT NULL,
    dims         integer NOT NULL CHECK (dims > 0 AND dims <= 16000),
    index_type   text NOT NULL CHECK (index_type IN ('vector', 'halfvec')),
    active       boolean NOT NULL DEFAULT true,
    created_at   timestamptz NOT NULL DEFAULT now()
);
-- At most one active model: a different configured model is a clear error.
CREATE UNIQUE INDEX IF NOT EXISTS embedding_models_one_active ON embedding_models (active) WHERE active;

-- Cache keyed by (hash of the embedded text, model): identical text is never embedded twice.
CREATE TABLE IF NOT EXISTS embedding_cache (
    text_hash   text NOT NULL,
    model       text NOT NULL REFERENCES embedding_models(model),
    embedding   vector NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (text_hash, model)
);

-- One embedding per item per model.
CREATE TABLE IF NOT EXISTS item_embeddings (
    item_id         text NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    model           text NOT NULL REFERENCES embedding_models(model),
    text_hash       text NOT NULL,
    embedding       vector NOT NULL,
    partition_hour  timestamptz NOT NULL,
    published_at    timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (item_id, model)
);
CREATE INDEX IF NOT EXISTS item_embeddings_partition_idx ON item_embeddings (model, partition_hour);
CREATE INDEX IF NOT EXISTS item_embeddings_published_idx ON item_embeddings (model, published_at);

-- ---------------------------------------------------------------- stories
-- Story id is derived from its founding item, so reruns give the same ids.
CREATE TABLE IF NOT EXISTS stories (
    id                      text PRIMARY KEY,
    model                   text NOT NULL REFERENCES embedding_models(model),
    created_partition       timestamptz NOT NULL,
    updated_partition       timestamptz NOT NULL,
    first_published_at      timestamptz NOT NULL,
    latest_published_at     timestamptz NOT NULL,
    centroid                vector NOT NULL,
    item_count              integer NOT NULL DEFAULT 0,
    representative_item_id  text REFERENCES items(id) ON DELETE SET NULL,
    -- LLM stage state: 1 = needs work, 0 = done, -1 = permanent failure (never retried automatically)
    needs_score             smallint NOT NULL DEFAULT 1 CHECK (needs_score IN (-1, 0, 1)),
    score_attempts          integer NOT NULL DEFAULT 0,
    scored_item_count       integer NOT NULL DEFAULT 0,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS stories_latest_idx ON stories (model, latest_published_at);
CREATE INDEX IF NOT EXISTS stories_updated_partition_idx ON stories (updated_partition);

-- Membership: the primary key on item_id holds the invariant
-- "an item belongs to at most one story".
CREATE TABLE IF NOT EXISTS story_items (
    item_id          text PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    story_id         text NOT NULL REFERENCES stories(id) ON DELETE CASCADE,
    pass             smallint NOT NULL CHECK (pass IN (1, 2, 3)),
    similarity       real,          -- cosine to the centroid (pass 1/3) or best in-component edge (pass 2)
    gap_hours        real,          -- |item.published_at - story.latest_published_at| when attached
    story_age_hours  real,          -- story age when attached
    partition_hour   timestamptz NOT NULL,
    added_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS story_items_story_idx ON story_items (story_id);
CREATE INDEX IF NOT EXISTS story_items_partition_idx ON story_items (partition_hour);

-- ----------------------------------------------------------------- scores
CREATE TABLE IF NOT EXISTS story_scores (
    story_id      text PRIMARY KEY REFERENCES stories(id) ON DELETE CASCADE,
    scale         real CHECK (scale BETWEEN 0 AND 10),
    impact        real CHECK (impact BETWEEN 0 AND 10),
    novelty       real CHECK (novelty BETWEEN 0 AND 10),
    breadth       real CHECK (breadth BETWEEN 0 AND 10),
    credibility   real CHECK (credibility BETWEEN 0 AND 10),
    urgency       real CHECK (urgency BETWEEN 0 AND 10),
    significance  real NOT NULL CHECK (significance BETWEEN 0 AND 10),
    headline      text NOT NULL,
    summary       text NOT NULL,
    pivot_lang    text NOT NULL DEFAULT 'en',
    model         text NOT NULL,      -- 'offline-heuristic' when no endpoint is configured
    offline       boolean NOT NULL DEFAULT false,
    item_count    integer NOT NULL DEFAULT 0,
    partition_hour timestamptz,
    scored_at     timestamptz NOT NULL DEFAULT now()
);

-- ----------------------------------------------------------- translations
CREATE TABLE IF NOT EXISTS story_translations (
    story_id    text NOT NULL REFERENCES stories(id) ON DELETE CASCADE,
    lang        text NOT NULL,
    headline    text,
    summary     text,
    -- 1 = needs translation, 0 = done, -1 = permanent failure, 2 = skipped (offline)
    status      smallint NOT NULL DEFAULT 1 CHECK (status IN (-1, 0, 1, 2)),
    attempts    integer NOT NULL DEFAULT 0,
    model       text,
    error       text,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (story_id, lang)
);

-- ----------------------------------------------------------------- events
CREATE TABLE IF NOT EXISTS events (
    id                       text PRIMARY KEY,
    model                    text NOT NULL REFERENCES embedding_models(model),
    title                    text NOT NULL,
    status                   text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
    centroid                 vector NOT NULL,
    first_published_at       timestamptz NOT NULL,
    last_published_at        timestamptz NOT NULL,
    created_partition        timestamptz NOT NULL,
    updated_partition        timestamptz NOT NULL,
    closed_at                timestamptz,
    story_count              integer NOT NULL DEFAULT 0,
    significance             real,
    narrative                jsonb,    -- {"what_happened","background","how_it_developed","what_to_watch"}
    narrative_lang           text,
    narrative_model          text,
    narrative_offline        boolean,
    narrative_generated_at   timestamptz,
    narrative_story_count    integer NOT NULL DEFAULT 0,
    needs_narrative          smallint NOT NULL DEFAULT 1 CHECK (needs_narrative IN (-1, 0, 1)),
    narrative_attempts       integer NOT NULL DEFAULT 0,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now()
);

-- Primary key on story_id: a story belongs to at most one event.
CREATE TABLE IF NOT EXISTS event_stories (
    story_id        text PRIMARY KEY REFERENCES stories(id) ON DELETE CASCADE,
    event_id        text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    similarity      real,
    partition_hour  timestamptz NOT NULL,
    added_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS event_stories_event_idx ON event_stories (event_id);

CREATE TABLE IF NOT EXISTS event_translations (
    event_id    text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    lang        text NOT NULL,
    title       text,
    narrative   jsonb,
    status      smallint NOT NULL DEFAULT 1 CHECK (status IN (-1, 0, 1, 2)),
    attempts    integer NOT NULL DEFAULT 0,
    model       text,
    error       text,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, lang)
);

-- ---------------------------------------------------------------- digests
CREATE TABLE IF NOT EXISTS digests (
    id            bigserial PRIMARY KEY,
    digest_date   date NOT NULL,
    lang          text NOT NULL,
    subject       text NOT NULL,
    html          text NOT NULL,
    text_body     text NOT NULL,
    story_ids     text[] NOT NULL DEFAULT '{}',
    outbox_path   text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (digest_date, lang)
);

CREATE TABLE IF NOT EXISTS subscribers (
    id          bigserial PRIMARY KEY,
    email       text NOT NULL UNIQUE,
    lang        text NOT NULL DEFAULT 'en',
    active      boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per (day, subscriber): a retried or re-materialised partition never sends twice.
CREATE TABLE IF NOT EXISTS deliveries (
    digest_date    date NOT NULL,
    subscriber_id  bigint NOT NULL REFERENCES subscribers(id) ON DELETE CASCADE,
    digest_id      bigint REFERENCES digests(id) ON DELETE SET NULL,
    status         text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'outbox')),
    attempts       integer NOT NULL DEFAULT 0,
    error          text,
    sent_at        timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (digest_date, subscriber_id)
);

-- --------------------------------------------------------------- LLM calls
CREATE TABLE IF NOT EXISTS llm_calls (
    id              bigserial PRIMARY KEY,
    task            text NOT NULL,   -- score | translate | narrative | narrative_translate | embed
    model           text NOT NULL,
    story_id        text,
    event_id        text,
    partition_hour  timestamptz,
    attempt         integer NOT NULL DEFAULT 1,
    tokens_in       integer NOT NULL DEFAULT 0,
    tokens_out      integer NOT NULL DEFAULT 0,
    cost_usd        numeric(12, 6) NOT NULL DEFAULT 0,
    latency_ms      integer,
    status          text NOT NULL CHECK (status IN ('ok', 'invalid', 'error')),
    error           text,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS llm_calls_partition_idx ON llm_calls (partition_hour, task);

-- Every article of a story: its canonical members plus their duplicates, so a story
-- still counts every source that reported it.
CREATE OR REPLACE VIEW story_articles AS
SELECT si.story_id, si.item_id, false AS is_duplicate, si.item_id AS canonical_item_id
  FROM story_items si
UNION ALL
SELECT si.story_id, d.item_id, true AS is_duplicate, si.item_id AS canonical_item_id
  FROM story_items si
  JOIN item_duplicates d ON d.canonical_item_id = si.item_id;
