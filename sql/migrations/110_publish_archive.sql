-- The site's archive (stages/publish/archive.py): each language's front page of each UTC day as it stood
-- after the day's last published hour. The day's stories are kept as the HTML the front page showed
-- (a day's page keeps what it said, whatever later hours or retention do to its stories); the page
-- around them (previous and next day, the month's calendar) is written again when a day is added or
-- pruned, which `page_hash` tells.
CREATE TABLE IF NOT EXISTS publish_archive_days (
    output_dir    text NOT NULL,
    lang          text NOT NULL,
    day           date NOT NULL,
    stories_html  text NOT NULL,
    stories_hash  text NOT NULL,
    story_count   integer NOT NULL,
    page_hash     text,                   -- of the page last written (its stories and its navigation)
    PRIMARY KEY (output_dir, lang, day)
);
