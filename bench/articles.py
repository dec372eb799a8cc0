#!/usr/bin/env python3
"""Article extraction on pages written for the bundled sample day: word-level precision, recall
and F1 of the extracted text against the text each page was written from, and pages per second on
one core, against a reference measured in the same run (every visible word of the page, by the
feed text cleaner: what a reader without extraction would keep).

    python bench/articles.py [--rounds 3]
    python bench/articles.py --write-pages   # the sample day's recorded pages, for the demo
    python bench/articles.py --unpack-real PATH   # real pages with reference texts, into data/
    python bench/articles.py --real               # those pages: the product's path and trafilatura alone

Each page is one sample item (`sample_data/articles.yaml`: 8 languages): its headline, and as the
article the item's summary followed by the summaries of the other items of its story in its
language (headline and article: the text the page was written from). A headline-only item (Google
News) has its original's page when it republishes one (the aggregator links there), else the
article written for it in the item's `page` field. Around it, the boilerplate news pages
carry, in the page's language: navigation, a cookie banner, an advertisement, a newsletter box,
related links (other headlines of the day), reader comments, a footer and scripts.

`--real` reads real news pages with reference texts (the Zyte article extraction benchmark, 181
pages: `--unpack-real` takes a local copy of its repository, a checkout or a bare git directory,
and writes `data/articles_real/`: the pages, named as the stage's recorded pages are, and
`references.jsonl`). Each page goes through the product's path, the code the stage runs once a
page is fetched (the recorded-pages reader: the feed fetcher reading the file, extraction in a
worker process with the stage's limits, the stored text's gzip round trip), and through trafilatura
alone on the same raw bytes with several flag sets, in the same run. Scores: word-level P/R/F1 (as
above, bag of words) and the benchmark's own shingle P/R/F1 (4-word shingles, each page's
true/false positives and misses normalised to sum 1, P and R averaged over pages, F1 of the means).
"""

from __future__ import annotations

import argparse
import gzip
import html
import io
import json
import random
import re
import statistics
import subprocess
import tarfile
import time
from collections import Counter
from pathlib import Path

import yaml
from common import REPO, peak_rss_mb

from newsdedup_dagster.shared.http.fetch import FetchConfig
from newsdedup_dagster.shared.text.sanitise import clean_text
from newsdedup_dagster.stages.articles.extract import _WORD, ExtractLimits, extract_page
from newsdedup_dagster.stages.articles.fetch import PageRequest
from newsdedup_dagster.stages.articles.settings import ArticleSettings
from newsdedup_dagster.stages.articles.store import (
    _gzip,
    article_text,
    page_fetch_config,
    replay_page_name,
    replay_pages,
)

SAMPLE = REPO / "newsdedup_dagster" / "sample_data" / "articles.yaml"
GOLD = SAMPLE.with_name("gold.jsonl")
PAGES = SAMPLE.with_name("pages")
REAL = REPO / "data" / "articles_real"
# trafilatura alone, on the raw page bytes: flag sets tried (the product's are in stages/articles/extract.py).
LIBRARY_FLAGS = {
    "defaults": {},
    "favor_precision": {"favor_precision": True},
    "favor_recall": {"favor_recall": True},
    "favor_precision, no tables": {"favor_precision": True, "include_tables": False},
    "favor_precision, deduplicate": {"favor_precision": True, "deduplicate": True},
}

BOILERPLATE = {
    "en": ("Home World Business Technology Sport Culture Opinion", "We use cookies to give you the best experience. "
           "Accept all cookies or manage your preferences.", "Advertisement", "Sign up for our morning newsletter",
           "Related stories", "Comments", ["This is exactly what I expected.", "Who is going to pay for this?",
                                           "Great reporting, thank you."], "© 2026 All rights reserved. Privacy policy"),
    "fr": ("Accueil Monde Économie Technologie Sport Culture Opinions", "Nous utilisons des cookies pour améliorer "
           "votre expérience. Tout accepter ou gérer vos préférences.", "Publicité", "Inscrivez-vous à notre lettre "
           "du matin", "À lire aussi", "Commentaires", ["C'était prévisible.", "Qui va payer tout cela ?",
                                                       "Merci pour cet article."], "© 2026 Tous droits réservés"),
    "de": ("Startseite Welt Wirtschaft Technik Sport Kultur Meinung", "Wir verwenden Cookies, um Ihnen das beste "
           "Erlebnis zu bieten. Alle akzeptieren oder Einstellungen verwalten.", "Anzeige", "Jetzt den "
           "Morgen-Newsletter abonnieren", "Mehr zum Thema", "Kommentare", ["Das war absehbar.", "Wer soll das "
           "bezahlen?", "Danke für den Bericht."], "© 2026 Alle Rechte vorbehalten"),
    "es": ("Portada Internacional Economía Tecnología Deportes Cultura Opinión", "Utilizamos cookies para mejorar "
           "su experiencia. Aceptar todas o gestionar preferencias.", "Publicidad", "Suscríbase a nuestro boletín "
           "matinal", "Noticias relacionadas", "Comentarios", ["Era de esperar.", "¿Quién va a pagar esto?",
                                                             "Gracias por la información."], "© 2026 Todos los derechos reservados"),
    "ru": ("Главная Мир Экономика Технологии Спорт Культура Мнения", "Мы используем файлы cookie, чтобы улучшить "
           "работу сайта. Принять все или настроить.", "Реклама", "Подпишитесь на утреннюю рассылку", "Читайте также",
           "Комментарии", ["Этого следовало ожидать.", "Кто за это заплатит?", "Спасибо за статью."],
           "© 2026 Все права защищены"),
    "ja": ("トップ 国際 経済 テクノロジー スポーツ 文化 オピニオン", "当サイトはクッキーを使用しています。すべて許可または設定を管理。",
           "広告", "朝のニュースレターに登録", "関連記事", "コメント", ["予想通りです。", "誰が負担するのでしょうか。",
                                                     "詳しい記事をありがとう。"], "© 2026 無断転載を禁じます"),
    "zh": ("首页 国际 财经 科技 体育 文化 评论", "本网站使用Cookie以改善您的体验。全部接受或管理偏好。", "广告",
           "订阅我们的早间新闻", "相关新闻", "评论", ["早就料到了。", "谁来买单？", "谢谢这篇报道。"], "© 2026 版权所有"),
    "ko": ("홈 국제 경제 IT 스포츠 문화 오피니언", "이 사이트는 더 나은 서비스를 위해 쿠키를 사용합니다. 모두 허용 또는 설정 관리.",
           "광고", "아침 뉴스레터 구독하기", "관련 기사", "댓글", ["예상했던 일이네요.", "비용은 누가 부담하나요?",
                                                  "좋은 기사 감사합니다."], "© 2026 무단 전재 및 재배포 금지"),
}


def sample_pages(seed: int = 2026) -> list[tuple[str, str, str, str]]:
    """(language, html, the text the page was written from, the item's link) for every sample item
    with a summary."""
    data = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    item_links = {}
    for line in GOLD.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        item_links[(record["source"], record["title"])] = record["url"]
    language = {s["id"]: s["language"] for s in data["sources"]}
    site = {s["id"]: s.get("site", "https://news.example") for s in data["sources"]}
    rng, headline_only_rng = random.Random(seed), random.Random(seed + 1)
    headlines: dict[str, list[str]] = {}
    for story in data["stories"]:
        for item in story["items"]:
            headlines.setdefault(language[item["src"]], []).append(item["title"])
    pages, written = [], set()
    for story in data["stories"]:
        for item in story["items"]:
            article = item
            if not item.get("summary"):
                if item_links[(item["src"], item["title"])] in written:
                    continue                    # a copy under the original's own link: its page
                originals = [i for i in story["items"] if i["src"] == item.get("dup_of") and i.get("summary")]
                if originals:
                    article = originals[0]      # the aggregator's link opens the original's article
                elif not item.get("page"):
                    continue
            lang = language[article["src"]]
            if article.get("summary"):
                others = [i["summary"] for i in story["items"] if i is not article and i.get("summary")
                          and language[i["src"]] == lang and i["summary"] != article["summary"]]
                paragraphs = [article["summary"], *dict.fromkeys(others)]
            else:
                paragraphs = [p for p in item["page"].split("\n") if p.strip()]
            nav, cookie, ad, newsletter, related, comments, remarks, footer = BOILERPLATE[lang]
            # Headline-only items draw their related links from a generator of their own, so that
            # the other pages stay as they were written.
            picker = rng if item.get("summary") else headline_only_rng
            links = picker.sample(headlines[lang], min(5, len(headlines[lang])))
            home, byline = site[article["src"]], article["src"]
            if not item.get("summary") and item.get("via"):
                home, byline = re.match(r"https?://[^/]+", item["via"]).group(0), item.get("via_name", byline)
            e = html.escape
            page = (
                f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{e(article["title"])}</title>'
                f'<meta property="article:published_time" content="2026-11-02T{article["t"]}:00+00:00">'
                f'<script>window.dataLayer=[{{"page":"article"}}];</script><style>.ad{{display:block}}</style></head>'
                f'<body><div class="cookie-banner" role="dialog"><p>{e(cookie)}</p><button>OK</button></div>'
                f'<header><a href="{home}">logo</a><nav><ul>'
                + "".join(f'<li><a href="/{w}">{e(w)}</a></li>' for w in nav.split()) + '</ul></nav></header>'
                f'<div class="ad" id="top-ad">{e(ad)}</div><main><article><h1>{e(article["title"])}</h1>'
                f'<div class="byline">{e(byline)}</div>'
                + "".join(f"<p>{e(p)}</p>" for p in paragraphs)
                + f'</article><aside class="newsletter"><h3>{e(newsletter)}</h3><form><input type="email"></form>'
                f'</aside><section class="related"><h2>{e(related)}</h2><ul>'
                + "".join(f'<li><a href="/r/{n}">{e(t)}</a></li>' for n, t in enumerate(links))
                + f'</ul></section><section class="comments"><h2>{e(comments)}</h2>'
                + "".join(f'<div class="comment"><p>{e(r)}</p></div>' for r in remarks)
                + f'</section></main><footer><p>{e(footer)}</p></footer>'
                f'<script>document.write("<p>injected</p>")</script></body></html>')
            written.add(item_links[(item["src"], item["title"])])
            pages.append((lang, page, "\n".join([article["title"], *paragraphs]), item_links[(item["src"], item["title"])]))
    return pages


def prf(extracted: str, reference: str) -> tuple[float, float, float]:
    got, want = Counter(_WORD.findall(extracted.lower())), Counter(_WORD.findall(reference.lower()))
    common = sum((got & want).values())
    precision = common / max(1, sum(got.values()))
    recall = common / max(1, sum(want.values()))
    return precision, recall, 2 * precision * recall / max(1e-9, precision + recall)


def visible_text(page: str) -> str:
    """The reference: every visible word (the feed text cleaner over the whole page)."""
    return clean_text(page)


def _benchmark_files(source: Path):
    """(name, bytes) of `ground-truth.json` and `html/*.html.gz` in a checkout or a bare git
    directory of the benchmark."""
    if (source / "ground-truth.json").is_file():
        yield "ground-truth.json", (source / "ground-truth.json").read_bytes()
        for path in sorted((source / "html").glob("*.html.gz")):
            yield f"html/{path.name}", path.read_bytes()
        return
    archive = subprocess.run(["git", f"--git-dir={source}", "archive", "--format=tar", "HEAD", "ground-truth.json",
                              "html"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            if member.isfile():
                yield member.name, tar.extractfile(member).read()


def unpack_real(source: Path, target: Path) -> None:
    """The benchmark's pages (ungzipped, named by their URL as the stage's recorded pages are) and
    `references.jsonl` (id, url, page file, reference text) under `target`."""
    files = dict(_benchmark_files(source))
    truth = json.loads(files["ground-truth.json"])
    (target / "pages").mkdir(parents=True, exist_ok=True)
    rows = []
    for key, record in sorted(truth.items()):
        name = replay_page_name(record["url"])
        (target / "pages" / name).write_bytes(gzip.decompress(files[f"html/{key}.html.gz"]))
        rows.append({"id": key, "url": record["url"], "page": name, "text": record.get("articleBody") or ""})
    (target / "references.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                             encoding="utf-8")
    print(f"{len(rows)} pages and their reference texts written to {target}")


def _shingles(text: str, n: int = 4) -> Counter:
    tokens = re.findall(r"\w+", text or "")
    return Counter(tuple(tokens[i:i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens[i:i + n])


def shingle_counts(extracted: str, reference: str) -> tuple[float, float, float]:
    """The benchmark's (tp, fp, fn) over 4-word shingles, normalised to sum 1 (evaluate.py)."""
    got, want = _shingles(extracted), _shingles(reference)
    tp, fp, fn = sum((got & want).values()), sum((got - want).values()), sum((want - got).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def shingle_prf(counts: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """Mean precision over pages that extracted something, mean recall over pages with a reference
    (a page with neither scores 1), F1 of the two means: the benchmark's figures."""
    def precision(tp, fp, fn):
        return 1.0 if fp == fn == 0 else 0.0 if tp == fp == 0 else tp / (tp + fp)

    def recall(tp, fp, fn):
        return 1.0 if fp == fn == 0 else 0.0 if tp == fn == 0 else tp / (tp + fn)

    p = statistics.mean([precision(*c) for c in counts if c[0] + c[1] > 0] or [0.0])
    r = statistics.mean([recall(*c) for c in counts if c[0] + c[2] > 0] or [0.0])
    return p, r, 2 * p * r / max(1e-9, p + r)


def product_texts(folder: Path, rows: list[dict]) -> tuple[dict[str, str], Counter]:
    """Each page's stored text through the stage's recorded-pages path (feed fetcher, extraction in
    a worker with the stage's default limits, gzip round trip), and the reasons pages kept none."""
    settings = ArticleSettings(replay_dir=folder)
    requests = [PageRequest(item_id=row["id"], url=row["url"]) for row in rows]
    run = replay_pages(requests, settings, page_fetch_config(FetchConfig(), settings))
    texts, reasons = {}, Counter()
    for outcome in run.outcomes:
        text = getattr(outcome.payload, "text", None)
        texts[outcome.item_id] = article_text(_gzip(text.encode("utf-8")) if text else None) or ""
        if outcome.reason:
            reasons[outcome.reason] += 1
    return texts, reasons


def real_pages(folder: Path) -> None:
    import trafilatura  # deferred: only this mode calls the library directly

    references = folder / "references.jsonl"
    if not references.is_file():
        raise SystemExit(f"{references} is missing: run `python bench/articles.py --unpack-real PATH` first")
    rows = [json.loads(line) for line in references.read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    product, reasons = product_texts(folder / "pages", rows)
    seconds = {"product": time.perf_counter() - started}
    outputs = {"product": product}
    for name, flags in LIBRARY_FLAGS.items():
        started = time.perf_counter()
        outputs[f"trafilatura {name}"] = {
            row["id"]: trafilatura.extract((folder / "pages" / row["page"]).read_bytes(), **flags) or ""
            for row in rows}
        seconds[f"trafilatura {name}"] = time.perf_counter() - started
    results = {}
    for method, texts in outputs.items():
        words = [prf(texts[row["id"]], row["text"]) for row in rows]
        results[method] = (tuple(sum(w[i] for w in words) / len(words) for i in range(3)),
                           shingle_prf([shingle_counts(texts[row["id"]], row["text"]) for row in rows]))
    best = max((m for m in results if m != "product"), key=lambda m: results[m][1][2])
    print(f"{len(rows)} real pages; the product kept no text for {sum(reasons.values())}"
          + (f" ({', '.join(f'{k} {v}' for k, v in sorted(reasons.items()))})" if reasons else ""))
    print(f"{'method':<43} {'word P':>6} {'R':>6} {'F1':>6}  {'shingle P':>9} {'R':>6} {'F1':>6}  {'pages/s':>7}")
    for method, ((wp, wr, wf), (sp, sr, sf)) in results.items():
        print(f"{method:<43} {wp:6.3f} {wr:6.3f} {wf:6.3f}  {sp:9.3f} {sr:6.3f} {sf:6.3f}  "
              f"{len(rows) / seconds[method]:7.1f}")
    (_, _, product_word), (_, _, product_shingle) = results["product"]
    print(f"product / {best} (best shingle F1): word F1 ratio "
          f"{product_word / max(1e-9, results[best][0][2]):.3f}, shingle F1 ratio "
          f"{product_shingle / max(1e-9, results[best][1][2]):.3f} "
          f"(difference {product_shingle - results[best][1][2]:+.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over all pages (best is reported)")
    parser.add_argument("--write-pages", action="store_true",
                        help="(re)write the sample day's recorded pages (sample_data/pages/, what the demo's "
                             "replayed hours read) and stop")
    parser.add_argument("--unpack-real", type=Path, metavar="PATH",
                        help="a local copy of the article extraction benchmark (checkout or bare git directory): "
                             "write its pages and reference texts to --real-dir and stop")
    parser.add_argument("--real", action="store_true",
                        help="score the real pages of --real-dir: the product's path and trafilatura alone")
    parser.add_argument("--real-dir", type=Path, default=REAL, help="where the real pages are (default data/articles_real)")
    args = parser.parse_args()
    if args.unpack_real:
        unpack_real(args.unpack_real, args.real_dir)
        return
    if args.real:
        real_pages(args.real_dir)
        return
    pages = sample_pages()
    if args.write_pages:
        PAGES.mkdir(exist_ok=True)
        for old in PAGES.glob("*.html"):
            old.unlink()
        for _lang, page, _text, link in pages:
            (PAGES / replay_page_name(link)).write_text(page, encoding="utf-8")
        print(f"{len(pages)} pages written to {PAGES}")
        return
    limits = ExtractLimits(min_words=1)
    scores: dict[str, dict[str, list]] = {"trafilatura": {}, "visible text": {}}
    empty = 0
    for lang, page, reference, _link in pages:
        result = extract_page(page.encode(), "text/html; charset=utf-8", "https://news.example/a", limits=limits)
        empty += result.text is None
        scores["trafilatura"].setdefault(lang, []).append(prf(result.text or "", reference))
        scores["visible text"].setdefault(lang, []).append(prf(visible_text(page), reference))

    def timed(function) -> float:
        best = float("inf")
        for _ in range(args.rounds):
            started = time.perf_counter()
            for _lang, page, _reference, _link in pages:
                function(page)
            best = min(best, time.perf_counter() - started)
        return len(pages) / best

    extract_rate = timed(lambda page: extract_page(page.encode(), "text/html", "https://news.example/a", limits=limits))
    visible_rate = timed(visible_text)
    print(f"{len(pages)} pages in {len(scores['trafilatura'])} languages "
          f"(mean {sum(len(p) for _, p, _, _ in pages) / len(pages) / 1024:.1f} KiB), {empty} without text")
    print(f"{'method':<13} {'lang':<5} {'pages':>5} {'P':>6} {'R':>6} {'F1':>6}")
    for method, by_lang in scores.items():
        for lang in [*sorted(by_lang), "all"]:
            rows = [r for rs in by_lang.values() for r in rs] if lang == "all" else by_lang[lang]
            p, r, f = (sum(x[i] for x in rows) / len(rows) for i in range(3))
            print(f"{method:<13} {lang:<5} {len(rows):>5} {p:6.3f} {r:6.3f} {f:6.3f}")
    print(f"pages/s on one core: trafilatura {extract_rate:.1f}, visible text {visible_rate:.1f} "
          f"(ratio {visible_rate / extract_rate:.1f}x); peak RSS {peak_rss_mb()} MB")


if __name__ == "__main__":
    main()
