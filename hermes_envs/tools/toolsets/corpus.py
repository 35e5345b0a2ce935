"""The fake web: a folder of Markdown/HTML pages (and optional fixed search results) searched deterministically.

An author extends it by dropping files in a folder and pointing ``HERMES_WEB_CORPUS`` (or
:func:`~hermes_envs.tools.toolsets.web.use_corpus`) at it. A page is ``*.md`` with optional YAML front matter
(``url``, ``title``, ``description``, ``keywords``) or ``*.html`` (``<title>``, ``<link rel="canonical">``,
``<meta name="description">``). ``results.yaml`` may pin the results of exact queries:
``{"queries": [{"query": "...", "results": [{"url", "title", "description"}]}]}``.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

import yaml

from hermes_envs.errors import ConfigError

__all__ = ["Corpus", "DEFAULT_CORPUS", "Page", "load_corpus", "normalize_url"]

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "testing" / "assets" / "web"
BASE_URL = "https://corpus.hermes.invalid/"
_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by for from how in is it of on or the this to was what when where which who why with"
    " does did do".split()
)


def normalize_url(url: str) -> str:
    """The key a page is found by: no fragment, lower-case scheme and host, no trailing slash (but the root)."""
    url, _ = urldefrag(url.strip())
    parts = urlsplit(url)
    if not parts.scheme:
        return url.rstrip("/")
    path = parts.path.rstrip("/") or "/"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


@dataclass
class Page:
    """One page of the fake web: its URL, title, description, Markdown text and (for HTML pages) the HTML."""

    url: str
    title: str
    markdown: str
    description: str = ""
    html: str | None = None
    keywords: list[str] = field(default_factory=list)
    source: str = ""

    def snippet(self, query: str, width: int = 220) -> str:
        """The page's description, or the text around the first query word."""
        if self.description:
            return self.description
        text = re.sub(r"\s+", " ", re.sub(r"[#*>`\[\]]", "", self.markdown)).strip()
        lowered = text.lower()
        hits = [lowered.find(w) for w in words(query) if w in lowered]
        start = max(min(hits) - 60, 0) if hits else 0
        return text[start : start + width].strip()


@dataclass
class Corpus:
    pages: dict[str, Page]
    pinned: dict[str, list[dict]] = field(default_factory=dict)
    root: str = ""

    def get(self, url: str) -> Page | None:
        key = normalize_url(url)
        return self.pages.get(key) or self.pages.get(normalize_url(key.split("?", 1)[0]))

    def search(self, query: str, limit: int = 5) -> list[dict]:
        """Up to ``limit`` results ``{title, url, description, position}``: pinned results for the exact query,
        else pages ranked by a TF-IDF score over title (x3), keywords (x3) and text; ties broken by URL."""
        pinned = self.pinned.get(" ".join(query.lower().split()))
        if pinned is not None:
            rows = [dict(r) for r in pinned[:limit]]
        else:
            terms = words(query)
            docs = {url: self._terms(page) for url, page in self.pages.items()}
            n = len(docs) or 1
            scored = []
            for url, (title, body) in docs.items():
                score = 0.0
                for term in set(terms):
                    df = sum(1 for t, b in docs.values() if term in t or term in b)
                    if not df:
                        continue
                    idf = math.log(1 + n / df)
                    score += idf * (3 * title.count(term) + math.log(1 + body.count(term)))
                if score > 0:
                    scored.append((-score, url))
            rows = []
            for _score, url in sorted(scored)[:limit]:
                page = self.pages[url]
                rows.append({"title": page.title, "url": page.url, "description": page.snippet(query)})
        for position, row in enumerate(rows, 1):
            row["position"] = position
        return rows

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def _terms_of(title: str, keywords: tuple[str, ...], text: str) -> tuple[list[str], list[str]]:
        return words(title) + words(" ".join(keywords)), words(text)

    def _terms(self, page: Page) -> tuple[list[str], list[str]]:
        return self._terms_of(page.title, tuple(page.keywords), page.markdown)


def _markdown_page(path: Path, rel: str) -> Page:
    text = path.read_text(encoding="utf-8")
    meta: dict = {}
    match = _FRONT.match(text)
    if match:
        meta = yaml.safe_load(match.group(1)) or {}
        if not isinstance(meta, dict):
            raise ConfigError(
                f"front matter of corpus page {str(path)!r} should be a YAML mapping; got {meta!r}."
            )
        text = text[match.end() :]
    title = str(
        meta.get("title")
        or next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.startswith("#")), rel)
    )
    return Page(
        url=str(meta.get("url") or BASE_URL + rel),
        title=title,
        markdown=text.strip() + "\n",
        description=str(meta.get("description") or ""),
        keywords=[str(k) for k in meta.get("keywords") or []],
        source=str(path),
    )


def _html_page(path: Path, rel: str) -> Page:
    from .dom import parse_html

    html = path.read_text(encoding="utf-8")
    doc = parse_html(html)
    return Page(
        url=doc.canonical or BASE_URL + rel,
        title=doc.title or rel,
        markdown=doc.to_markdown(),
        description=doc.meta.get("description", ""),
        keywords=[k.strip() for k in doc.meta.get("keywords", "").split(",") if k.strip()],
        html=html,
        source=str(path),
    )


def _load(root: Path) -> Corpus:
    if not root.exists():
        raise ConfigError(
            f"the web corpus should be a folder of .md/.html pages or a results YAML; got {str(root)!r}, which does "
            "not exist. Fix: point HERMES_WEB_CORPUS (or use_corpus()) at an existing folder."
        )
    pages: dict[str, Page] = {}
    pinned: dict[str, list[dict]] = {}
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        rel = path.relative_to(root).with_suffix("").as_posix() if path != root else path.stem
        suffix = path.suffix.lower()
        if suffix == ".md":
            page = _markdown_page(path, rel)
        elif suffix in (".html", ".htm"):
            page = _html_page(path, rel)
        elif suffix in (".yaml", ".yml"):
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            for entry in data.get("queries", []) if isinstance(data, dict) else []:
                pinned[" ".join(str(entry["query"]).lower().split())] = list(entry.get("results") or [])
            for spec in data.get("pages", []) if isinstance(data, dict) else []:
                page = Page(
                    url=str(spec["url"]),
                    title=str(spec.get("title", spec["url"])),
                    markdown=str(spec.get("content", "")),
                    description=str(spec.get("description", "")),
                    source=str(path),
                )
                pages[normalize_url(page.url)] = page
            continue
        else:
            continue
        key = normalize_url(page.url)
        if key in pages:
            raise ConfigError(
                f"corpus page URLs should be unique; {page.url!r} is given by {pages[key].source!r} and "
                f"{page.source!r}. Fix: change the url of one of them."
            )
        pages[key] = page
    return Corpus(pages=pages, pinned=pinned, root=str(root))


@functools.lru_cache(maxsize=16)
def _cached(root: str, stamp: float) -> Corpus:
    return _load(Path(root))


def load_corpus(root: str | os.PathLike[str] | None = None) -> Corpus:
    """The corpus at ``root`` (default: ``HERMES_WEB_CORPUS``, else the small one shipped with hermes-envs);
    re-read when a file in it changes."""
    chosen = Path(root or os.environ.get("HERMES_WEB_CORPUS") or DEFAULT_CORPUS).expanduser().resolve()
    stamp = 0.0
    if chosen.exists():
        paths = [chosen] if chosen.is_file() else list(chosen.rglob("*"))
        stamp = max((p.stat().st_mtime for p in paths), default=0.0) + len(paths)
    return _cached(str(chosen), stamp)
