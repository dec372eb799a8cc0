"""Where and what `story_feeds` publishes (built by config.publish_settings())."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from newsdedup_dagster.shared.models.settings import LLMSettings
from newsdedup_dagster.shared.settings import check_language_codes, setting


@dataclass(frozen=True)
class PublishSettings:
    """Where and what `story_feeds` publishes: Atom + JSON Feed per language and a static site."""

    CALIBRATION: ClassVar[str] = "publish"  # its section in the calibration file

    # config.publish_settings() puts $NEWSDEDUP_HOME/public here when the variable is unset.
    output_dir: Path = setting(Path(".newsdedup/public"), env="NEWSDEDUP_PUBLISH_DIR",
                               shown="`$NEWSDEDUP_HOME/public`", doc="output directory of `story_feeds`")
    # Empty = the pivot language and every story translation language.
    langs: tuple[str, ...] = setting((), env="NEWSDEDUP_PUBLISH_LANGS", shown="pivot + translation languages",
                                     doc="one feed and site per language, comma-separated")
    # A feed holds the stories active in the last N hours, the most significant first, at most
    # max_stories of them (0 = no limit on either, but not both).
    window_hours: int = setting(24, calibrated=True, was="NEWSDEDUP_PUBLISH_WINDOW_HOURS",
                                doc="a feed holds the stories with an article in the last N hours (0 = no limit)")
    max_stories: int = setting(100, calibrated=True, was="NEWSDEDUP_PUBLISH_MAX_STORIES",
                               doc="at most this many stories per feed, most significant first "
                                   "(0 = no limit; not both 0)")
    min_significance: float = setting(0.0, calibrated=True, was="NEWSDEDUP_PUBLISH_MIN_SIGNIFICANCE",
                                      doc="stories below this significance are left out")
    # Absolute URL the directory is served at: feeds need absolute links (self, entries).
    base_url: str = setting("http://127.0.0.1:8000/", env="NEWSDEDUP_PUBLISH_BASE_URL",
                            doc="absolute URL the directory is served at (feeds' links)")
    # Entry ids are tag URIs minted under this name once per story and then kept for good.
    tag_authority: str = setting("newsdedup.localhost", env="NEWSDEDUP_PUBLISH_TAG_AUTHORITY",
                                 doc="domain in the entries' tag URIs (set it once: ids are kept per story)")
    title: str = setting("newsdedup", env="NEWSDEDUP_PUBLISH_TITLE", doc="site and feed title")

    def __post_init__(self) -> None:
        if self.window_hours < 0 or self.max_stories < 0 or (self.window_hours == 0 and self.max_stories == 0):
            raise ValueError("publish.window_hours / publish.max_stories: expected >= 0, and not both 0")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"NEWSDEDUP_PUBLISH_BASE_URL={self.base_url!r}: expected an http(s) URL")
        check_language_codes("NEWSDEDUP_PUBLISH_LANGS", self.langs)   # each names a directory
        if not self.base_url.endswith("/"):
            object.__setattr__(self, "base_url", self.base_url + "/")

    def feed_langs(self, llm: LLMSettings) -> tuple[str, ...]:
        if self.langs:
            return self.langs
        return tuple(dict.fromkeys([llm.pivot_lang, *llm.translation_langs]))
