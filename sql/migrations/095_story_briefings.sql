-- A story's briefing (briefings/): category, summary, key points and quotes, each line citing the
-- story's articles, as JSON; what the checks dropped, by reason; the articles and pages it was built
-- from (material), so a story is briefed again only when they change.
CREATE TABLE IF NOT EXISTS story_briefings (
    story_id       text PRIMARY KEY REFERENCES stories(id) ON DELETE CASCADE,
    material       text NOT NULL,             -- md5 of the story's article ids and their pages' status
    lang           text,                      -- the language of the briefing's lines
    method         text NOT NULL CHECK (method IN ('extractive', 'model')),
    category       text NOT NULL,
    briefing       jsonb NOT NULL,
    dropped        jsonb NOT NULL DEFAULT '{}',
    partition_hour timestamptz NOT NULL,
    briefed_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS story_briefings_category_idx ON story_briefings (category);
