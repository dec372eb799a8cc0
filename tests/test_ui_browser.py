"""The Dagster UI as an operator uses it, in headless Chromium (Debian's /usr/bin/chromium driven by
Playwright; no browser is downloaded): `newsdedup dev` serves the asset graph with every asset in its
stage group; a 3-hour backfill is launched through the UI itself (asset graph -> Materialize ->
partition range -> Launch backfill) and completes; screenshots of the graph, the backfill and the
stories checks page are saved under the test's tmp directory, and `make screenshots`
(NEWSDEDUP_UPDATE_SCREENSHOTS=1) keeps the graph's in docs/screenshots/ for the README."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from dagster_deployment import DagsterDeployment
from helpers import keep_screenshots

pytestmark = [pytest.mark.slow, pytest.mark.daemon, pytest.mark.browser, pytest.mark.timeout(1500)]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
GROUPS = {
    "ingest": {"raw_items"}, "dedup": {"item_duplicates"}, "clustering": {"item_embeddings", "stories"},
    "llm": {"story_scores", "story_translations"}, "events": {"events"}, "digest": {"digest"},
    "articles": {"article_texts"},
}
ALL_ASSETS = set().union(*GROUPS.values())
HOURS = "[2026-11-02-05:00...2026-11-02-07:00]"


def _graph_text(page) -> str:
    """The lineage pane's text (between the page header and the filter box)."""
    body = page.inner_text("body")
    return body.split("Reload definitions", 1)[-1]


def _expand_all_groups(page) -> None:
    page.get_by_role("button", name="Materialize all").wait_for(timeout=120_000)
    # The graph's settings menu (gear, bottom right of the canvas) holds "Expand all groups" (Alt+E).
    page.keyboard.press("Alt+e")
    page.wait_for_timeout(1500)


@pytest.mark.skipif(not CHROMIUM.exists() or shutil.which("chromium") is None, reason="Debian chromium not installed")
def test_operator_launches_a_backfill_from_the_asset_graph(tmp_path, clean_db):
    from playwright.sync_api import sync_playwright

    shots = tmp_path / "screenshots"
    shots.mkdir()
    with DagsterDeployment(tmp_path / "deployment", clean_db, newsdedup_dev=True) as dep, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        # First visit on localhost shows a "Join the Dagster community" dialog; mark it as seen.
        context.add_init_script("window.localStorage.setItem('communityNux', '\"1\"')")
        page = context.new_page()
        page.set_default_timeout(60_000)

        # Every asset, in its group: filter the graph to one group at a time.
        for group, assets in GROUPS.items():
            page.goto(f"{dep.url}/asset-groups~group:%22{group}%22/")
            page.get_by_role("button", name=re.compile("Materialize")).first.wait_for(timeout=120_000)
            for asset in assets:
                page.get_by_text(asset, exact=True).first.wait_for()
            shown = {a for a in ALL_ASSETS if re.search(rf"\b{a}\b", _graph_text(page))}
            assert shown == assets, f"group {group}: graph shows {shown}"
        assert page.get_by_text("Join the Dagster community").count() == 0

        # The whole graph, groups expanded.
        page.goto(f"{dep.url}/asset-groups")
        _expand_all_groups(page)
        for asset in ALL_ASSETS:
            page.get_by_text(asset, exact=True).first.wait_for()
        page.screenshot(path=str(shots / "asset_graph.png"))

        # Materialize the hourly assets (the digest is daily) for 3 hours, through the dialog.
        page.goto(f"{dep.url}/asset-groups~not%20key:%22digest%22/")
        page.get_by_role("button", name="Materialize all").click()
        partitions = page.get_by_placeholder("No matching partitions")
        partitions.click()
        partitions.fill(HOURS)
        partitions.press("Enter")
        page.get_by_text("3 partitions").first.wait_for()
        page.get_by_role("button", name="Launch backfill").click()
        toast = page.get_by_text(re.compile(r"Created backfill \w+"))
        toast.wait_for()
        backfill_id = re.search(r"Created backfill (\w+)", toast.inner_text()).group(1)

        status = dep.wait_for_backfill(backfill_id, timeout=1200)
        assert status in ("COMPLETED", "COMPLETED_SUCCESS"), f"{status}\n{dep.log_tail()}"
        # The hourly assets' backfill policy is a single run: the three hours are one run of the chain.
        from dagster import AssetKey, RunsFilter

        instance = dep.instance()
        runs = instance.get_runs(filters=RunsFilter(tags={"dagster/backfill": backfill_id}))
        chain_runs = [r for r in runs if AssetKey("stories") in (r.asset_selection or set())]
        assert len(chain_runs) == 1, [(r.run_id, r.asset_selection, r.tags) for r in runs]
        assert (chain_runs[0].tags.get("dagster/asset_partition_range_start"),
                chain_runs[0].tags.get("dagster/asset_partition_range_end")) == ("2026-11-02-05:00", "2026-11-02-07:00")
        instance.dispose()
        page.goto(f"{dep.url}/runs/b/{backfill_id}")
        page.get_by_text("2026-11-02-05:00...2026-11-02-07:00").first.wait_for()
        page.get_by_text("Completed", exact=False).first.wait_for()
        page.wait_for_timeout(1500)
        page.screenshot(path=str(shots / "backfill.png"), full_page=True)

        page.goto(f"{dep.url}/assets/stories?view=checks")
        page.get_by_text("one_story_per_item").first.wait_for()
        page.get_by_text("Passed").first.wait_for()
        assert page.get_by_text("Failed", exact=True).count() == 0
        page.screenshot(path=str(shots / "stories_checks.png"), full_page=True)
        browser.close()

    for name in ("asset_graph.png", "backfill.png", "stories_checks.png"):
        assert (shots / name).stat().st_size > 10_000, name
    keep_screenshots(shots, {"asset_graph.png": "dagster-asset-graph.png"})
    print(f"screenshots: {shots}")
