"""Render the site icon (newsdedup_dagster/stages/publish/static/icon.svg) to the two PNGs the feeds and
pages name, with Debian's chromium: `python tests/render_icons.py` after editing the SVG."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

STATIC = Path(__file__).resolve().parent.parent / "newsdedup_dagster" / "stages" / "publish" / "static"
SIZES = {"icon.png": 512, "favicon.png": 64}


def main() -> None:
    svg = (STATIC / "icon.svg").read_text(encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
        try:
            for name, size in SIZES.items():
                page = browser.new_page(viewport={"width": size, "height": size})
                sized = svg.replace('width="64" height="64"', f'width="{size}" height="{size}"')
                page.set_content(f'<html><body style="margin:0;background:transparent">{sized}</body></html>')
                page.screenshot(path=str(STATIC / name), omit_background=True,
                                clip={"x": 0, "y": 0, "width": size, "height": size})
                page.close()
        finally:
            browser.close()


if __name__ == "__main__":
    main()
