-- Near-duplicates look up candidates, not the window (stages/neardup/store.py, bands path).
--
-- An hour used to read and shingle every item of the 36 h look-back window in Python, for the IDF and
-- as match candidates: memory and time grew with the window (10.5 GB at 20,000 items an hour).
-- Instead, as each hour of items ENTERS the window it is shingled once:
--   * neardup_df_docs counts the window's items per (language, exact key): distinct normalised
--     headlines, as the IDF counts them (30 syndicated copies are one document);
--   * neardup_df holds each term's document frequency over those distinct headlines, per language
--     (kind 'g' = character 3-gram, 'w' = light-stemmed word), moved up when a key's first item
--     enters and down when its last item leaves;
--   * neardup_bands holds each item's signature: its exact key, its loose URL key and its rarest
--     3-grams (by the window's document frequencies when it entered), hashed to bigint.
-- When the hour LEAVES the window the same counts go down and its bands are deleted.
-- neardup_df_window records which window the counts describe, so a rerun of any hour moves it
-- (forwards or backwards) hour by hour. An hour then looks up its new items' candidates by band
-- (btree index) and only their terms' frequencies.
CREATE TABLE IF NOT EXISTS neardup_df_window (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    window_from timestamptz NOT NULL,  -- the counts cover items with window_from <= partition_hour < window_to
    window_to   timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS neardup_df_docs (
    lang       text NOT NULL,
    exact_key  text NOT NULL,
    -- the normalised text whose words were counted (spacing variants share an exact key, not their
    -- words): the same words are taken away when the key's last item leaves
    normalized text NOT NULL,
    items      integer NOT NULL CHECK (items > 0),
    PRIMARY KEY (lang, exact_key)
);

CREATE TABLE IF NOT EXISTS neardup_df (
    lang  text NOT NULL,
    kind  "char" NOT NULL,  -- 'g' 3-gram, 'w' word
    term  text NOT NULL,
    df    integer NOT NULL CHECK (df > 0),
    PRIMARY KEY (lang, kind, term)
);

-- Every item of the window's hours is signed (not only canonical ones): a rerun that undoes a
-- demotion needs no re-signing; the lookup keeps the canonical ones. Items deleted by retention
-- take their bands with them.
CREATE TABLE IF NOT EXISTS neardup_bands (
    hash            bigint NOT NULL,  -- headline.band_hash(kind, text): kind in the hash
    lang            text NOT NULL,    -- '' for URL keys (URL variants match across languages)
    partition_hour  timestamptz NOT NULL,
    item_id         text NOT NULL REFERENCES items(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS neardup_bands_lookup ON neardup_bands (hash, lang, partition_hour) INCLUDE (item_id);
CREATE INDEX IF NOT EXISTS neardup_bands_hour ON neardup_bands (partition_hour);
