-- A story's briefing lines (summary, key points, perspectives; never the verbatim quotes) in each
-- published language other than the briefing's own, translated by the story_translations stage.
-- Each row belongs to one version of the briefing (its material, and an md5 of the stored JSON):
-- a re-briefed story's row is reset and translated again, and a row of another version is never shown.
CREATE TABLE IF NOT EXISTS briefing_translations (
    -- belongs to the story's briefing: goes with it (and with the story)
    story_id      text NOT NULL REFERENCES story_briefings(story_id) ON DELETE CASCADE,
    lang          text NOT NULL,
    material      text NOT NULL,             -- story_briefings.material of the briefing translated
    briefing_md5  text NOT NULL,             -- md5(story_briefings.briefing::text) of that briefing
    lines         jsonb,                     -- field name (summary, point_<n>, perspective_<n>) -> text
    -- 1 = needs translation, 0 = done, -1 = permanent failure, 2 = skipped (offline)
    status        smallint NOT NULL DEFAULT 1 CHECK (status IN (-1, 0, 1, 2)),
    attempts      integer NOT NULL DEFAULT 0,
    model         text,
    error         text,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (story_id, lang)
);
CREATE INDEX IF NOT EXISTS briefing_translations_pending_idx ON briefing_translations (story_id) WHERE status = 1;
-- The stage looks at the briefings of its recent hours only.
CREATE INDEX IF NOT EXISTS story_briefings_partition_idx ON story_briefings (partition_hour);
