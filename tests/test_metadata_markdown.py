"""Every Markdown table an asset writes into its metadata is a table the Dagster UI renders: parsed
by a CommonMark parser with GitHub's tables (markdown-it-py), each table's header, delimiter and
body rows have one cell count, and each renders as a table (GitHub's rule: a delimiter row of another
length than the header makes no table, and the UI shows the raw text).

The tables come from real materialisations: sample-day hours through the hourly job as the demo
runs them, the first offline, the last against the local OpenAI-compatible server (the model's
top stories, the hour's call totals) and then once more (nothing left to do), the day's digest and
retention. Every metadata key the package writes as Markdown (found in its source) is among those
checked."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from dagster import AssetMaterialization, DagsterInstance, MarkdownMetadataValue, materialize
from markdown_it import MarkdownIt
from test_llm_stages import llm_env, online  # noqa: F401  (fixtures)

from newsdedup_dagster.stages.llm.report import errors_markdown, top_stories_markdown

PACKAGE = Path(__file__).resolve().parents[1] / "newsdedup_dagster"
DAY = "2026-11-02"
HOURS = 3
# Keys whose Markdown only a failure writes: a list of errors, never a table (checked below).
ERROR_KEYS = {"errors", "briefing_errors"}

GFM = MarkdownIt("commonmark").enable("table")


def _cells(row: str) -> list[str]:
    """A table row's cells as GitHub splits them: on every pipe that no backslash escapes."""
    cells, cell, k = [], "", 0
    text = row.strip()
    while k < len(text):
        if text[k] == "\\" and k + 1 < len(text):
            cell += text[k:k + 2]
            k += 2
            continue
        if text[k] == "|":
            cells.append(cell)
            cell = ""
        else:
            cell += text[k]
        k += 1
    cells.append(cell)
    if text.startswith("|"):
        cells = cells[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        cells = cells[:-1]
    return [c.strip() for c in cells]


def _pipe_blocks(markdown: str) -> list[list[str]]:
    """Runs of consecutive lines that start with a pipe: what is meant as a table."""
    blocks, current = [], []
    for line in markdown.split("\n"):
        if line.lstrip().startswith("|"):
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def table_problems(markdown: str) -> list[str]:
    """What keeps `markdown`'s tables from rendering as tables of consistent rows (none: fine)."""
    problems = []
    blocks = _pipe_blocks(markdown)
    for block in blocks:
        if len(block) < 2:
            problems.append(f"a table row without header or delimiter: {block[0][:80]}")
            continue
        header, delimiter, *body = (_cells(row) for row in block)
        if not all(c and set(c) <= set(":-") and "-" in c for c in delimiter):
            problems.append(f"not a delimiter row: {block[1][:80]}")
        widths = {len(header), len(delimiter), *(len(row) for row in body)}
        if len(widths) != 1:
            problems.append(f"cell counts {len(header)} (header), {len(delimiter)} (delimiter), "
                            f"{sorted({len(row) for row in body})} (rows): {block[0][:80]}")
    tokens = GFM.parse(markdown)
    rendered = [t for t in tokens if t.type == "table_open"]
    if len(rendered) != len(blocks):
        problems.append(f"{len(blocks)} tables written, {len(rendered)} rendered as tables")
    # Each rendered table: as many header cells as every row has cells.
    depth, row_cells, widths = 0, 0, []
    for t in tokens:
        if t.type == "table_open":
            depth, widths = 1, []
        elif t.type == "tr_open":
            row_cells = 0
        elif t.type in ("th_open", "td_open"):
            row_cells += 1
        elif t.type == "tr_close":
            widths.append(row_cells)
        elif t.type == "table_close" and depth:
            depth = 0
            if len(set(widths)) != 1:
                problems.append(f"rendered rows of {sorted(set(widths))} cells")
    return problems


def _written_markdown_keys() -> set[str]:
    """Every metadata key the package gives a `MetadataValue.md(...)` value, from its source."""
    keys = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            pairs = []
            if isinstance(node, ast.Dict):
                pairs = list(zip(node.keys, node.values))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
                pairs = [(node.targets[0].slice, node.value)]
            for key, value in pairs:
                if (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Call)
                        and isinstance(value.func, ast.Attribute) and value.func.attr == "md"):
                    keys.add(key.value)
    return keys


def _markdown_of(events) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for event in events:
        if not event.is_step_materialization:
            continue
        materialization: AssetMaterialization = event.event_specific_data.materialization
        for key, value in materialization.metadata.items():
            if isinstance(value, MarkdownMetadataValue):
                out.setdefault((materialization.asset_key.to_user_string(), key), []).append(value.value)
    return out


def test_the_checker_refuses_what_the_ui_showed_as_raw_text():
    rows = [{"significance": 7.4, "scale": None, "impact": None, "novelty": None, "breadth": 8.3, "credibility": 7.9,
             "urgency": 5.6, "headline": "World on course for 2.6C of heating | UN", "languages": ["de", "en"],
             "source_count": 9, "model": "offline-heuristic", "offline": True}]
    header = "| # | sig | sca | imp | nov | bre | cre | urg | headline | languages | sources | scored by |"
    assert table_problems(f"{header}\n|{'---|' * 13}\n| 1 |") != []
    assert table_problems(top_stories_markdown(rows)) == []
    assert _pipe_blocks(errors_markdown(["HTTP 500 | upstream said | no"])) == []


@pytest.mark.slow
def test_every_markdown_table_the_assets_write_renders(clean_db, monkeypatch, tmp_path, fake, llm_env,  # noqa: F811
                                                       online):  # noqa: F811
    from newsdedup_dagster.assets.hourly import hourly_run_config
    from newsdedup_dagster.assets.retention import prune
    from newsdedup_dagster.definitions import DAILY_JOB_NAME, HOURLY_JOB_NAME, defs
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG
    from newsdedup_dagster.resources import PostgresResource

    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path / "public"))
    monkeypatch.setenv("NEWSDEDUP_OUTBOX", str(tmp_path / "outbox"))
    found: dict[tuple[str, str], list[str]] = {}
    with DagsterInstance.ephemeral() as instance:
        hourly = defs.resolve_job_def(HOURLY_JOB_NAME)
        # As the demo runs the sample day (commands/platform.py); the last hour with a model, then again.
        for hour in [*range(HOURS), HOURS - 1]:
            if hour == HOURS - 1:
                online()
                monkeypatch.setenv("NEWSDEDUP_LLM_BASE_URL", fake.base_url)
            result = hourly.execute_in_process(
                partition_key=f"{DAY}-{hour:02d}:00", instance=instance, raise_on_error=False,
                run_config={**QUIET_RUN_CONFIG, **hourly_run_config(raw_items={"fetch_mode": "replay"},
                                                                      stories={"later_partitions": "reset"})})
            assert result.success, hour
            found.update({k: found.get(k, []) + v for k, v in _markdown_of(result.all_events).items()})
        daily = defs.resolve_job_def(DAILY_JOB_NAME)
        result = daily.execute_in_process(partition_key=DAY, instance=instance, raise_on_error=False,
                                          run_config={**QUIET_RUN_CONFIG, "ops": {"digest": {"config": {"send": False}}}})
        assert result.success
        found.update({k: found.get(k, []) + v for k, v in _markdown_of(result.all_events).items()})
        result = materialize([prune], resources={"postgres": PostgresResource(database_url=clean_db)},
                             instance=instance)
        assert result.success
        found.update({k: found.get(k, []) + v for k, v in _markdown_of(result.all_events).items()})

    tables = {where: texts for where, texts in found.items() if any(_pipe_blocks(t) for t in texts)}
    # Every writer of a table ran with rows to show.
    assert {("story_scores", "top_stories"), ("story_scores", "partition_llm_totals"),
            ("story_translations", "partition_llm_totals"), ("stories", "largest_stories_explained"),
            ("story_feeds", "feeds"), ("prune", "removed")} <= set(tables), sorted(tables)
    assert _written_markdown_keys() - ERROR_KEYS <= {key for _, key in found}, sorted(found)
    for where, texts in found.items():
        for text in texts:
            assert table_problems(text) == [], (where, text[:600])
