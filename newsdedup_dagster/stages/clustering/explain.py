"""Why a story holds the articles it holds: `newsdedup explain STORY_ID` and the `stories` asset's
markdown block. Reads what the clustering transaction recorded (story_items, story_decisions) and
never recomputes similarities, so it shows the decisions as they were made.

The weakest link is what an operator looks for when two events were merged: for the edges that hold
a pass-2 story together it is the bottleneck of their maximum spanning tree (the edge the story
would split at first; a bridge between two stories is exactly that edge), and an attachment by
centroid (pass 1 / 3) competes with it by its margin over the threshold then in force.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.text.markdown import markdown_cell
from newsdedup_dagster.stages.clustering.decisions import weakest_link
from newsdedup_dagster.stages.clustering.unionfind import UnionFind


@dataclass
class Member:
    item_id: str
    title: str
    lang: str
    source: str
    published_at: datetime | None
    pass_no: int | None            # 1, 2, 3; None for a duplicate (it follows its canonical item)
    similarity: float | None
    threshold: float | None
    gap_hours: float | None
    via: str | None                # pass 2: the neighbour of its strongest in-story edge
    duplicate_of: str | None
    partition_hour: datetime | None
    vector_of: str | None = None   # embeds the same text as this earlier item: one vector, shared
    # the article stage's result for its page (articles/): ok / failed / deferred, why, how long
    article_status: str | None = None
    article_reason: str | None = None
    article_words: int | None = None
    article_lead: str | None = None


@dataclass
class Edge:
    item_a: str
    item_b: str
    similarity: float
    directions: int
    kept: bool
    cut_group: int | None
    founded_in: datetime


@dataclass
class CutGroup:
    cut_group: int
    item_ids: list[str]
    became_story_id: str | None
    strongest_cut_edge: Edge | None
    founded_in: datetime


@dataclass
class Veto:
    """A merge the anchor check refused (shared/text/anchors.py): the KNN edge item -- other (pass
    2) or item's attachment to this story (pass 1 / 3, other None), and the anchors that conflicted."""
    item_id: str
    other: str | None
    similarity: float
    pass_no: int
    kinds: list[str]
    item_anchors: dict
    other_anchors: dict
    partition_hour: datetime


@dataclass
class Weakest:
    kind: str                      # "edge" (holds a pass-2 story) or "attachment" (pass 1 / 3)
    item_a: str
    item_b: str | None
    similarity: float
    threshold: float | None
    margin: float | None
    splits_into: tuple[list[str], list[str]] | None = None   # for an edge: the two sides


@dataclass
class Explanation:
    story_id: str
    headline: str
    created_partition: datetime
    item_count: int
    members: list[Member] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    cut_groups: list[CutGroup] = field(default_factory=list)
    weakest: Weakest | None = None
    vetoes: list[Veto] = field(default_factory=list)

    def as_dict(self) -> dict:
        out = asdict(self)
        for key in ("created_partition",):
            out[key] = self.created_partition.isoformat()
        for m in out["members"]:
            for k in ("published_at", "partition_hour"):
                m[k] = m[k].isoformat() if m[k] else None
        for e in out["edges"]:
            e["founded_in"] = e["founded_in"].isoformat()
        for v in out["vetoes"]:
            v["partition_hour"] = v["partition_hour"].isoformat()
        for c in out["cut_groups"]:
            c["founded_in"] = c["founded_in"].isoformat()
            if c["strongest_cut_edge"]:
                c["strongest_cut_edge"]["founded_in"] = c["strongest_cut_edge"]["founded_in"].isoformat()
        return out


class StoryNotFound(LookupError):
    pass


def load(conn: psycopg.Connection, story_id: str) -> Explanation:
    """Everything recorded about one story. A unique id prefix (as shown in the asset table) works."""
    rows = conn.execute(db.load_sql("cluster_explain_story"), {"id": story_id, "prefix": story_id + "%"}).fetchall()
    if len(rows) != 1:
        conn.commit()
        raise StoryNotFound(f"no story {story_id!r}" if not rows else
                            f"{story_id!r} matches {len(rows)} stories; give more of the id")
    sid, headline, created, count = rows[0]
    members = [Member(*r) for r in conn.execute(db.load_sql("cluster_explain_members"), {"id": sid})]
    decisions = conn.execute(
        db.load_sql("cluster_explain_decisions"),
        (sid,)).fetchall()
    conn.commit()
    out = Explanation(sid, headline or "", created, int(count), members)
    for hour, edges, cuts, vetoes in decisions:
        out.vetoes.extend(Veto(item, other, float(sim), int(pass_no), list(kinds), mine or {}, theirs or {}, hour)
                          for item, other, sim, pass_no, kinds, mine, theirs in vetoes or [])
        batch = [Edge(a, b, float(sim), int(d), bool(kept), grp, hour) for a, b, sim, d, kept, grp in edges]
        out.edges.extend(batch)
        for no, items, became in cuts:
            cut = [e for e in batch if not e.kept and e.cut_group == no]
            strongest = max(cut, key=lambda e: (e.similarity, e.item_a, e.item_b)) if cut else None
            out.cut_groups.append(CutGroup(int(no), list(items), became, strongest, hour))
    out.weakest = weakest_admission(out)
    return out


def _item_threshold(story: Explanation) -> float | None:
    """The pass-2 item threshold in force (a member held only by an edge across languages below it
    has the cross-language bar as its own threshold: the highest is the item threshold)."""
    return max((m.threshold for m in story.members
                if m.duplicate_of is None and m.pass_no == 2 and m.threshold is not None), default=None)


def weakest_admission(story: Explanation) -> Weakest | None:
    """The admission with the least to spare: the bottleneck edge of the pass-2 founding (by its
    margin over the pass-2 threshold) or the weakest centroid attachment (by its margin)."""
    canonical = [m for m in story.members if m.duplicate_of is None]
    candidates: list[Weakest] = []
    kept = [(e.item_a, e.item_b, e.similarity) for e in story.edges if e.kept]
    pass2 = [m.item_id for m in canonical if m.pass_no == 2]
    if kept and len(pass2) >= 2:
        link = weakest_link(pass2, kept)
        if link:
            a, b, sim = link
            threshold = _item_threshold(story)
            sides = _sides(pass2, kept, (a, b))
            candidates.append(Weakest("edge", a, b, sim, threshold,
                                      None if threshold is None else sim - threshold, sides))
    for m in canonical:
        if m.pass_no in (1, 3) and m.similarity is not None:
            margin = None if m.threshold is None else m.similarity - m.threshold
            candidates.append(Weakest("attachment", m.item_id, None, m.similarity, m.threshold, margin))
    if not candidates:
        return None
    return min(candidates, key=lambda w: (w.margin if w.margin is not None else w.similarity, w.similarity, w.item_a))


def _sides(members: list[str], kept: list[tuple[str, str, float]], cut: tuple[str, str]) -> tuple[list[str], list[str]]:
    """The two groups the story's maximum spanning tree falls into without edge `cut`: the stories
    the merge joined (each side's other links to the far side are all weaker than `cut`)."""
    tree: UnionFind[str] = UnionFind(members)
    sides: UnionFind[str] = UnionFind(members)
    for a, b, _ in sorted(kept, key=lambda e: (-e[2], e[0], e[1])):
        if a in tree and b in tree and tree.union(a, b) and {a, b} != set(cut):
            sides.union(a, b)
    left = sorted(m for m in members if sides.connected(m, cut[0]))
    right = sorted(m for m in members if sides.connected(m, cut[1]))
    return left, right


# ------------------------------------------------------------------ rendering
PASS_NAMES = {1: "1 centroid", 2: "2 edge", 3: "3 centroid", None: "dup"}


def _f(x: float | None, fmt: str = "{:.3f}") -> str:
    return "–" if x is None else fmt.format(x)


def _is_weak(story: Explanation, m: Member) -> bool:
    w = story.weakest
    if w is None:
        return False
    return m.item_id == w.item_a or (w.kind == "edge" and m.item_id == w.item_b)


def render_text(story: Explanation, width: int = 100) -> str:
    """One screen: header, the weakest link, members, holding edges, cut communities."""
    lines = [f"story {story.story_id}  ({story.item_count} items, founded {story.created_partition:%Y-%m-%d %H:00})",
             f"  {story.headline[: width - 2]}"]
    w = story.weakest
    if w is not None:
        if w.kind == "edge":
            left, right = w.splits_into or ([], [])
            lines.append(f">> weakest link: edge {w.item_a} -- {w.item_b}  cosine {w.similarity:.3f}"
                         f" (threshold {_f(w.threshold, '{:.2f}')}, margin {_f(w.margin, '{:+.3f}')});"
                         f" without it the story splits {len(left)} | {len(right)}")
        else:
            lines.append(f">> weakest link: {w.item_a} attached by centroid, cosine {w.similarity:.3f}"
                         f" (threshold {_f(w.threshold, '{:.2f}')}, margin {_f(w.margin, '{:+.3f}')})")
    lines.append("")
    lines.append(f"   {'item':<14} {'lang':<4} {'source':<12} {'pass':<10} {'cos':>6} {'gap h':>6}  {'via':<14} title")
    for m in story.members:
        mark = ">>" if _is_weak(story, m) else "  "
        via = m.via or (f"dup of {m.duplicate_of[:7]}" if m.duplicate_of else ("centroid" if m.pass_no in (1, 3) else ""))
        lines.append(f"{mark} {m.item_id[:14]:<14} {(m.lang or '?')[:4]:<4} {(m.source or '')[:12]:<12} "
                     f"{PASS_NAMES.get(m.pass_no, '?'):<10} {_f(m.similarity):>6} {_f(m.gap_hours, '{:.1f}'):>6}  "
                     f"{via[:14]:<14} {(m.title or '')[: max(10, width - 76)]}")
    shared = [m for m in story.members if m.vector_of]
    if shared:
        lines.append("shared vectors (same embedded text, embedded once): " + ", ".join(
            f"{m.item_id[:14]} = {m.vector_of[:14]}" for m in shared[:8]) + (" …" if len(shared) > 8 else ""))
    kept = sorted((e for e in story.edges if e.kept), key=lambda e: (e.similarity, e.item_a, e.item_b))
    if kept:
        lines.append("")
        lines.append(f"edges holding the pass-2 story ({len(kept)}, weakest first; ** = mutual neighbours):")
        bar = _item_threshold(story)
        for e in kept[:12]:
            mark = ">>" if w is not None and w.kind == "edge" and {e.item_a, e.item_b} == {w.item_a, w.item_b} else "  "
            below = bar is not None and e.similarity < bar - 1e-6
            lines.append(f"{mark} {e.item_a[:14]:<14} -- {e.item_b[:14]:<14} {e.similarity:.3f}{' **' if e.directions == 2 else ''}"
                         f"{' below the item threshold: two languages, the same magnitude' if below else ''}")
        if len(kept) > 12:
            lines.append(f"   … {len(kept) - 12} stronger edges")
    if story.cut_groups:
        lines.append("")
        lines.append(f"cut away by the chaining guard ({len(story.cut_groups)} communities of the same component):")
        for c in story.cut_groups[:10]:
            e = c.strongest_cut_edge
            edge = f"strongest cut edge {e.item_a[:14]} -- {e.item_b[:14]} {e.similarity:.3f}" if e else "no direct edge"
            fate = f"-> story {c.became_story_id[:11]}" if c.became_story_id else "-> no story"
            lines.append(f"   #{c.cut_group} {len(c.item_ids)} items ({', '.join(i[:10] for i in c.item_ids[:3])}"
                         f"{', …' if len(c.item_ids) > 3 else ''}) {fate}; {edge}")
        if len(story.cut_groups) > 10:
            lines.append(f"   … {len(story.cut_groups) - 10} more")
    lines.extend(_article_lines(story, width))
    if story.vetoes:
        lines.append("")
        lines.append(f"refused by the anchor check ({len(story.vetoes)}; conflicting anchors, this side | the other):")
        for v in story.vetoes[:12]:
            what = f"{v.item_id[:14]:<14} -- {v.other[:14]:<14}" if v.other else f"{v.item_id[:14]:<14} -> this story  "
            lines.append(f"   {what} {v.similarity:.3f} pass {v.pass_no}  {veto_line(v)[: max(20, width - 50)]}")
        if len(story.vetoes) > 12:
            lines.append(f"   … {len(story.vetoes) - 12} more")
    return "\n".join(lines)


def article_summary(story: Explanation) -> str | None:
    """What the article stage read of the members' pages: "3 of 5 pages read (1,240 words); no text:
    robots 1, timeout 1", or None when it has looked at none (the stage off, or not yet run)."""
    seen = [m for m in story.members if m.article_status]
    if not seen:
        return None
    read = [m for m in seen if m.article_status == "ok"]
    words = sum(m.article_words or 0 for m in read)
    why: dict[str, int] = {}
    for m in seen:
        if m.article_status != "ok":
            reason = m.article_reason or m.article_status
            why[reason] = why.get(reason, 0) + 1
    out = f"{len(read)} of {len(story.members)} pages read ({words:,} words)"
    if why:
        out += "; no text: " + ", ".join(f"{r} {n}" for r, n in sorted(why.items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def _article_lines(story: Explanation, width: int) -> list[str]:
    summary = article_summary(story)
    if summary is None:
        return []
    lines = ["", f"article pages: {summary}"]
    for m in story.members:
        if m.article_status == "ok" and m.article_lead:
            lines.append(f"   {m.item_id[:14]:<14} {m.article_words or 0:>6} words  {m.article_lead[: max(20, width - 31)]}")
        elif m.article_status:
            lines.append(f"   {m.item_id[:14]:<14} {m.article_reason or m.article_status}")
    return lines[:14]


def veto_line(v: Veto) -> str:
    """"years 2008 | 2011; names boston, red sox | …": each conflicting kind, this side | the other."""
    parts = []
    for kind in v.kinds:
        key = kind.split()[0]  # "names split": the names each part carries
        mine = ", ".join(v.item_anchors.get(key, [])[:6]) or "–"
        theirs = ", ".join(v.other_anchors.get(key, [])[:6]) or "–"
        parts.append(f"{kind} {mine} | {theirs}")
    return "; ".join(parts)


def render_markdown(story: Explanation, max_members: int = 15) -> str:
    """The same for the Dagster UI (asset materialisation metadata)."""
    w = story.weakest
    out = [f"**`{story.story_id[:11]}`** {markdown_cell(story.headline, 120)} ({story.item_count} items)"]
    if w is not None:
        what = (f"edge `{w.item_a[:10]}`–`{w.item_b[:10]}`" if w.kind == "edge"
                else f"`{w.item_a[:10]}` attached by centroid")
        out.append(f"\nweakest link: {what}, cosine {w.similarity:.3f}, margin {_f(w.margin, '{:+.3f}')}")
    out.append("\n| item | lang | source | pass | cosine | gap h | via | title |\n|---|---|---|---|---|---|---|---|")
    for m in story.members[:max_members]:
        bold = "**" if _is_weak(story, m) else ""
        via = m.via[:10] if m.via else ("dup" if m.duplicate_of else ("centroid" if m.pass_no in (1, 3) else ""))
        out.append(f"| {bold}`{m.item_id[:10]}`{bold} | {markdown_cell(m.lang or '?', 12)} | {markdown_cell(m.source, 20)} | "
                   f"{PASS_NAMES.get(m.pass_no, '?')} | {_f(m.similarity)} | {_f(m.gap_hours, '{:.1f}')} | {via} | "
                   f"{markdown_cell(m.title, 80)} |")
    if len(story.members) > max_members:
        out.append(f"\n_{len(story.members) - max_members} more articles: `newsdedup explain {story.story_id}`_")
    shared = [m for m in story.members if m.vector_of]
    if shared:
        out.append("\nshared vectors (same embedded text): " + "; ".join(
            f"`{m.item_id[:10]}` = `{m.vector_of[:10]}`" for m in shared[:6]))
    if story.cut_groups:
        out.append("\ncut away: " + "; ".join(
            f"{len(c.item_ids)} items{' (story `' + c.became_story_id[:11] + '`)' if c.became_story_id else ''}"
            + (f" via {c.strongest_cut_edge.similarity:.3f}" if c.strongest_cut_edge else "")
            for c in story.cut_groups[:6]))
    summary = article_summary(story)
    if summary is not None:
        out.append(f"\narticle pages: {summary}")  # our own words and reason codes: nothing to escape
    if story.vetoes:
        out.append("\nrefused by the anchor check: " + "; ".join(
            f"`{v.item_id[:10]}`{'–`' + v.other[:10] + '`' if v.other else ''} ({markdown_cell(veto_line(v), 80)})"
            for v in story.vetoes[:6]))
    return "\n".join(out)
