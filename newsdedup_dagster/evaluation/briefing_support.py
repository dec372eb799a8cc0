"""`newsdedup eval support --pairs FILE [--sweep] [--json] [--embedder e5|use|none] [--set KEY=VALUE]`:
precision and recall of the briefing line support rule (stages/briefings/support.py) on labelled
(line, cited sentence) pairs, same-language and cross-language pairs apart.

A pairs file has one JSON object per line: {"line", "line_lang", "sentence", "sentence_lang",
"label": "supported" | "unsupported", "kind"}; the sentence is what the line cites (one sentence or
a short passage of adjacent ones), judged as `line_supported(line, line_lang, [(sentence,
sentence_lang)], embed)` judges it. Both classes are scored: precision of "supported" (of the lines
the rule lets through, the share that are supported: an unsupported line published is the harm)
and its recall (a true line must pass), and the same two of "unsupported".

With --sweep, each bar is swept with the other at its value (default or --set): the same-language
pairs are decided by the word bar alone, the cross-language ones by either bar.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from newsdedup_dagster.stages.briefings.support import (
    DEFAULT_RULES,
    SupportRules,
    SupportScores,
    memoised,
    support_scores,
)

LABELS = ("supported", "unsupported")
FIELDS = ("line", "line_lang", "sentence", "sentence_lang", "label")
EMBEDDERS = ("e5", "use", "none")
# Default sweep ranges (start, stop, step), stop included.
WORDS_SWEEP = (0.30, 0.90, 0.05)
CROSS_SWEEP = (0.30, 0.70, 0.02)
SETTABLE = {f.name: f.type for f in dataclasses.fields(SupportRules)}


def load_pairs(path: str | Path) -> list[dict]:
    """The labelled pairs of a JSON-lines file (ValueError naming the line when one is malformed)."""
    pairs = []
    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            pair = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {number}: {exc}") from None
        if not isinstance(pair, dict) or any(key not in pair for key in FIELDS):
            raise ValueError(f"{path}: line {number}: expected an object with {', '.join(FIELDS)}")
        if pair["label"] not in LABELS:
            raise ValueError(f"{path}: line {number}: label {pair['label']!r} is not one of {LABELS}")
        pairs.append(pair)
    if not pairs:
        raise ValueError(f"{path}: no pairs")
    return pairs


def rules_from(assignments: Sequence[str]) -> SupportRules:
    """SupportRules with `key=value` overrides (ValueError on an unknown key or a bad value)."""
    values = {}
    for assignment in assignments:
        key, sep, value = assignment.partition("=")
        key = key.strip()
        if not sep or key not in SETTABLE:
            raise ValueError(f"--set {assignment!r}: expected KEY=VALUE with KEY one of {', '.join(SETTABLE)}")
        values[key] = int(value) if SETTABLE[key] in ("int", int) else float(value)
    return dataclasses.replace(DEFAULT_RULES, **values)


def make_embed(name: str):
    """(embed callable or None, model id) of an offline embedder (never the configured network one)."""
    if name == "none":
        return None, "none"
    from newsdedup_dagster.stages.embeddings.providers import make_embedder  # deferred: models load when asked
    from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings  # deferred with it

    embedder = make_embedder(EmbeddingSettings(provider=name))
    return memoised(embedder.embed), embedder.model_id


def is_cross(pair: dict) -> bool:
    return (pair["line_lang"] or "").split("-")[0].lower() != (pair["sentence_lang"] or "").split("-")[0].lower()


def score_pairs(pairs: Sequence[dict], embed, rules: SupportRules = DEFAULT_RULES) -> list[SupportScores]:
    """Both scores of every pair, as line_supported computes them."""
    return [support_scores(p["line"], p["line_lang"], [(p["sentence"], p["sentence_lang"])], embed, rules)
            for p in pairs]


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def confusion(pairs: Sequence[dict], scores: Sequence[SupportScores], rules: SupportRules) -> dict:
    """Precision and recall of both classes over `pairs` under `rules`."""
    truth = [p["label"] == "supported" for p in pairs]
    judged = [s.supported(rules) for s in scores]
    tp = sum(t and j for t, j in zip(truth, judged))
    fp = sum(j and not t for t, j in zip(truth, judged))
    fn = sum(t and not j for t, j in zip(truth, judged))
    tn = len(truth) - tp - fp - fn
    return {"pairs": len(truth), "supported": tp + fn, "unsupported": fp + tn, "passed_unsupported": fp,
            "failed_supported": fn,
            "supported_precision": _ratio(tp, tp + fp), "supported_recall": _ratio(tp, tp + fn),
            "unsupported_precision": _ratio(tn, tn + fn), "unsupported_recall": _ratio(tn, tn + fp)}


def frange(start: float, stop: float, step: float) -> list[float]:
    count = int(round((stop - start) / step))
    return [round(start + i * step, 4) for i in range(count + 1)]


def parse_range(spec: str) -> tuple[float, float, float]:
    try:
        start, stop, step = (float(x) for x in spec.split(":"))
    except ValueError:
        raise ValueError(f"{spec!r}: expected START:STOP:STEP") from None
    if step <= 0 or stop < start:
        raise ValueError(f"{spec!r}: expected START <= STOP and STEP > 0")
    return start, stop, step


def evaluate(pairs: Sequence[dict], embed, rules: SupportRules, sweep: bool = False,
             words_range: tuple[float, float, float] = WORDS_SWEEP,
             cross_range: tuple[float, float, float] = CROSS_SWEEP) -> dict:
    """The rule's figures on `pairs`: at `rules`, per kind, and (sweep) over each bar's range."""
    started = time.perf_counter()
    scores = score_pairs(pairs, embed, rules)
    seconds = time.perf_counter() - started
    groups = {"same-language": [i for i, p in enumerate(pairs) if not is_cross(p)],
              "cross-language": [i for i, p in enumerate(pairs) if is_cross(p)],
              "all": list(range(len(pairs)))}

    def figures(current: SupportRules) -> dict:
        return {name: confusion([pairs[i] for i in idx], [scores[i] for i in idx], current)
                for name, idx in groups.items()}

    kinds: dict[str, Counter] = {}
    for pair, score in zip(pairs, scores):
        row = kinds.setdefault(f"{pair.get('kind', '?')} ({pair['label']})", Counter())
        side = "cross" if is_cross(pair) else "same"
        row[f"{side}_pairs"] += 1
        row[f"{side}_passed"] += int(score.supported(rules))
    result = {"rules": dataclasses.asdict(rules), "groups": figures(rules),
              "kinds": {k: dict(v) for k, v in sorted(kinds.items())}, "score_seconds": seconds}
    if sweep:
        result["sweep"] = {
            "min_shared_words": [{"value": v, **figures(dataclasses.replace(rules, min_shared_words=v))}
                                 for v in frange(*words_range)],
            "min_cross_similarity": [{"value": v, **figures(dataclasses.replace(rules, min_cross_similarity=v))}
                                     for v in frange(*cross_range)],
        }
    return result


def _cell(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def _row(label: str, figures: dict) -> str:
    return (f"{label:<16} {figures['pairs']:>5} {figures['supported']:>5}   "
            f"{_cell(figures['supported_precision'])}  {_cell(figures['supported_recall'])}      "
            f"{_cell(figures['unsupported_precision'])}  {_cell(figures['unsupported_recall'])}   "
            f"{figures['passed_unsupported']:>3} {figures['failed_supported']:>3}")


HEADER = ("                 pairs  sup.   supported: P  R      unsupported: P  R   "
          "passed-unsup. failed-sup.")


def format_report(result: dict, model: str) -> str:
    rules = result["rules"]
    lines = [f"rules: min_shared_words {rules['min_shared_words']:.2f}, min_cross_similarity "
             f"{rules['min_cross_similarity']:.2f} ({model}), max_embedded_sentences "
             f"{rules['max_embedded_sentences']}", HEADER]
    lines += [_row(name, figures) for name, figures in result["groups"].items()]
    lines.append(f"(scored in {result['score_seconds']:.1f} s)")
    lines += ["", "judged supported, per kind (same-language, cross-language):"]
    for kind, row in result["kinds"].items():
        cells = [f"{row.get(f'{side}_passed', 0)}/{row[f'{side}_pairs']}" if row.get(f"{side}_pairs") else "-"
                 for side in ("same", "cross")]
        lines.append(f"  {kind:<40} {cells[0]:>7} {cells[1]:>7}")
    for bar, rows in result.get("sweep", {}).items():
        lines += ["", f"sweep of {bar} (the other bar at its value above):",
                  f"{bar:<22} {'same-language: P(sup) R(sup) P(uns) R(uns)':<46} cross-language: P(sup) R(sup) P(uns) R(uns)"]
        for row in rows:
            same, cross = row["same-language"], row["cross-language"]
            lines.append(f"{row['value']:<22.2f} " + "".join(
                f"{_cell(g['supported_precision'])}  {_cell(g['supported_recall'])}  "
                f"{_cell(g['unsupported_precision'])}  {_cell(g['unsupported_recall'])}".ljust(48 if g is same else 0)
                for g in (same, cross)))
    return "\n".join(lines)


def run(pairs_path: str | Path, embedder: str = "e5", assignments: Sequence[str] = (), sweep: bool = False,
        words_range: str | None = None, cross_range: str | None = None, as_json: bool = False) -> str:
    """What `newsdedup eval support` prints (ValueError / OSError on bad input)."""
    if embedder not in EMBEDDERS:
        raise ValueError(f"--embedder {embedder!r}: expected one of {EMBEDDERS}")
    rules = rules_from(assignments)
    pairs = load_pairs(pairs_path)
    ranges = {"words_range": parse_range(words_range) if words_range else WORDS_SWEEP,
              "cross_range": parse_range(cross_range) if cross_range else CROSS_SWEEP}
    embed, model = make_embed(embedder)
    result = evaluate(pairs, embed, rules, sweep=sweep, **ranges)
    result["model"] = model
    if as_json:
        return json.dumps(result, ensure_ascii=False, default=_plain)
    return format_report(result, model)


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value).__name__)
