"""Every relative link in the documentation leads somewhere: README.md, CONTRIBUTING.md and docs/**/*.md
link to files that exist and to headings that exist (GitHub's anchors), and so do the
`docs/<file>.md#anchor` references in the code's comments."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
# [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_REFERENCE = re.compile(r"docs/((?:[a-z_]+/)?[A-Za-z_]+\.md)#([A-Za-z0-9_-]+)")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup and punctuation dropped, lower case, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link keeps its text
    text = text.replace("`", "").replace("*", "")
    text = "".join(c for c in text.lower()
                   if c in " -_" or unicodedata.category(c)[0] in ("L", "N", "M"))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(path: Path) -> list[str]:
    found = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        found += LINK.findall(INLINE_CODE.sub("", line))
    return found


def broken(source: Path, target: str) -> str | None:
    """Why `target` (as written in `source`) leads nowhere, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):   # https:, mailto: ...: not checked (no network)
        return None
    path_part, _, anchor = target.partition("#")
    destination = (source.parent / path_part).resolve() if path_part else source
    if not destination.exists():
        return f"{target}: no file {destination}"
    if anchor:
        if destination.suffix != ".md":
            return f"{target}: an anchor into a file that is not markdown"
        if anchor not in anchors(destination):
            return f"{target}: no heading with anchor #{anchor} in {destination.name}"
    return None


def test_the_link_checker_sees_what_github_sees(tmp_path):
    page = tmp_path / "page.md"
    other = tmp_path / "other.md"
    other.write_text("# Title\n\n## Delivery: each reader once, as far as SMTP allows\n\n"
                     "### Neighbours per item (knn_k)\n\n## Retention\n\n## Retention\n\n"
                     "```bash\n# not a heading\n```\n", encoding="utf-8")
    page.write_text("[ok](other.md#delivery-each-reader-once-as-far-as-smtp-allows) "
                    "[ok](other.md#neighbours-per-item-knn_k) [ok](other.md#retention-1) "
                    "[ok](#top) [web](https://example.org/x) `[code](nowhere.md)`\n\n# Top\n\n"
                    "[missing file](nothing.md) [missing anchor](other.md#not-a-heading)\n"
                    "![image](other.md)\n\n```\n[in code](nowhere.md)\n```\n", encoding="utf-8")
    found = links(page)
    assert "nowhere.md" not in found and "https://example.org/x" in found
    problems = [p for p in (broken(page, t) for t in found) if p]
    assert len(problems) == 2, problems
    assert problems[0].startswith("nothing.md: no file")
    assert problems[1].startswith("other.md#not-a-heading: no heading with anchor #not-a-heading")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(doc):
    problems = [p for p in (broken(doc, target) for target in links(doc)) if p]
    assert not problems, f"{doc.relative_to(REPO)}: " + "; ".join(problems)


def test_every_docs_anchor_named_in_the_code_exists():
    problems = []
    for folder in ("newsdedup_dagster", "bench", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for name, anchor in CODE_REFERENCE.findall(path.read_text(encoding="utf-8")):
                doc = REPO / "docs" / name
                if not doc.exists() or anchor not in anchors(doc):
                    problems.append(f"{path.relative_to(REPO)}: docs/{name}#{anchor}")
    assert not problems, "anchors that do not exist: " + ", ".join(sorted(set(problems)))


# ------------------------------------------------------------------ code the documents name
INLINE = re.compile(r"`([^`\n]+)`")
# `stages/clustering/passes.py`, `assets/hourly.py: hourly_chain`, `tests/test_x.py::test_y`
CODE_PATH = re.compile(r"^((?:[\w.-]+/)+[\w.-]+\.(?:py|sql|j2|yaml|toml|md|jsonl|json|txt))"
                       r"(?:(?:::|:)\s*([A-Za-z_]\w*))?$")
# `hourly.run_stage`, `briefings.categories.story_category()`
DOTTED = re.compile(r"^((?:[a-z_]+\.)*[a-z_]+)\.([A-Za-z_]\w*)(?:\(.*\))?$")
FILE_SUFFIXES = {"py", "sql", "md", "yaml", "txt", "json", "jsonl", "j2", "toml", "html", "xml", "gz", "png"}
ROOTS = [REPO, REPO / "newsdedup_dagster", REPO / "sql" / "queries", REPO / "sql"]


def defines(path: Path, name: str) -> bool:
    """Whether the Python file `path` defines or imports `name` (a function, class, constant or field)."""
    return bool(re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{name}\b|^\s*{name}\s*[:=]|^from .* import .*\b{name}\b"
                          rf"|^\s+{name},", path.read_text(encoding="utf-8"), re.M))


def _calibration_sections() -> dict[str, set[str]]:
    from newsdedup_dagster import config

    sections: dict[str, set[str]] = {}
    for section, key, *_ in config.calibration_rows():
        sections.setdefault(section, set()).add(key.split(".", 1)[1])
    return sections


CALIBRATION_SECTIONS = _calibration_sections()


def tables() -> set[str]:
    """Table names of the migrations: `subscribers.subscribed_at` is a column, not code."""
    found: set[str] = set()
    for path in (REPO / "sql" / "migrations").glob("*.sql"):
        found |= set(re.findall(r"CREATE TABLE(?: IF NOT EXISTS)?\s+(\w+)", path.read_text(encoding="utf-8"), re.I))
    return found


def package_module(dotted: str, by_stem: dict[str, list[Path]]) -> Path | None:
    parts = [p for p in dotted.split(".") if p != "newsdedup_dagster"]
    if not parts:
        return None
    candidate = REPO / "newsdedup_dagster" / Path(*parts)
    if candidate.with_suffix(".py").exists():
        return candidate.with_suffix(".py")
    if (candidate / "__init__.py").exists():
        return candidate / "__init__.py"
    if len(parts) == 1 and len(by_stem.get(parts[0], [])) == 1:
        return by_stem[parts[0]][0]
    return None


def cited_code_problems(doc: Path, known_tables: set[str], by_stem: dict[str, list[Path]]) -> list[str]:
    problems = []
    for line in prose_lines(doc.read_text(encoding="utf-8")):
        for code in INLINE.findall(line):
            code = code.strip()
            if match := CODE_PATH.match(code):
                path, name = match.groups()
                if path.startswith("dagster/") or "NNN" in path:   # Dagster's own source; a pattern
                    continue
                found = [root / path for root in ROOTS if (root / path).exists()]
                if not found:
                    problems.append(f"{doc.name}: `{code}`: no such file")
                elif name and found[0].suffix == ".py" and not defines(found[0], name):
                    problems.append(f"{doc.name}: `{code}`: {path} has no {name}")
            elif match := DOTTED.match(code):
                dotted, name = match.groups()
                if dotted in CALIBRATION_SECTIONS and name not in FILE_SUFFIXES:   # `clustering.knn_k`: a calibration key
                    if name not in CALIBRATION_SECTIONS[dotted]:
                        problems.append(f"{doc.name}: `{code}`: no such calibration key")
                    continue
                if name in FILE_SUFFIXES or dotted.split(".")[-1] in known_tables:
                    continue
                module = package_module(dotted, by_stem)
                if module is not None and not defines(module, name):
                    problems.append(f"{doc.name}: `{code}`: {module.relative_to(REPO)} has no {name}")
    return problems


def test_the_code_checker_sees_a_missing_file_and_a_missing_function(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("`assets/hourly.py: hourly_chain` `newsdedup_dagster/assets/hourly.py` `hourly.stage_named` "
                    "`subscribers.subscribed_at` `dagster/_core/x.py`\n"
                    "`assets/hourly.py: run_stage` `publish/background.py` `hourly.run_stage()`\n", encoding="utf-8")
    by_stem: dict[str, list[Path]] = {}
    for path in (REPO / "newsdedup_dagster").rglob("*.py"):
        by_stem.setdefault(path.stem, []).append(path)
    problems = cited_code_problems(page, tables(), by_stem)
    assert len(problems) == 3, problems
    assert "has no run_stage" in problems[0] and "no such file" in problems[1] and "has no run_stage" in problems[2]


def test_every_file_and_function_the_documents_name_exists():
    """A document that names `path.py`, `path.py: name` or `module.name` names something that is there."""
    by_stem: dict[str, list[Path]] = {}
    for path in (REPO / "newsdedup_dagster").rglob("*.py"):
        by_stem.setdefault(path.stem, []).append(path)
    known_tables = tables()
    problems = [p for doc in DOCS for p in cited_code_problems(doc, known_tables, by_stem)]
    assert not problems, "\n".join(problems)
