"""The ``web`` toolset (``web_search``, ``web_extract``) and ``search`` (``web_search`` only), as upstream has them.

Backends: ``fake`` (the offline corpus, :mod:`.corpus`), and the real ones upstream supports, chosen by
``HERMES_WEB_BACKEND`` or, under "auto", by the first key set: Firecrawl (``FIRECRAWL_API_KEY`` or
``FIRECRAWL_API_URL``), Parallel (``PARALLEL_API_KEY``), Tavily (``TAVILY_API_KEY``), Exa (``EXA_API_KEY``). Real
calls go through the recorder hook (:mod:`.recording`). Results keep upstream's shapes:
``{"success": true, "data": {"web": [{title, url, description, position}]}}`` and
``{"results": [{url, title, content, error}]}``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

from ..registry import ToolRegistry
from ._backends import FAKE, slot
from ._limits import ToolBackendError
from ._tooling import register_family, schema
from .corpus import Corpus, load_corpus
from .web_backends import CorpusServerBackend, ExaBackend, FirecrawlBackend, ParallelBackend, TavilyBackend

__all__ = [
    "ExaBackend",
    "FakeWebBackend",
    "FirecrawlBackend",
    "ParallelBackend",
    "TavilyBackend",
    "WebBackend",
    "register_web_tools",
    "use_corpus",
    "web_backend",
]

SEARCH_LIMIT = 5
EXTRACT_LIMIT = 5
KEYS = (
    ("firecrawl", ("FIRECRAWL_API_KEY", "FIRECRAWL_API_URL")),
    ("parallel", ("PARALLEL_API_KEY",)),
    ("tavily", ("TAVILY_API_KEY",)),
    ("exa", ("EXA_API_KEY",)),
)


class WebBackend(Protocol):
    """What a web backend does: search the web, and extract pages as Markdown (both in upstream's shapes)."""

    def search(self, query: str, limit: int) -> dict[str, Any]: ...

    def extract(self, urls: list[str]) -> dict[str, Any]: ...


def _has(name: str) -> bool:
    return bool(os.environ.get(name, "").strip())


def _auto() -> str:
    for name, keys in KEYS:
        if any(_has(k) for k in keys):
            return name
    raise ToolBackendError(
        "web_search/web_extract should have a web backend; got none of FIRECRAWL_API_KEY, FIRECRAWL_API_URL, "
        "PARALLEL_API_KEY, TAVILY_API_KEY or EXA_API_KEY set. Fix: export one of those keys, or "
        f"HERMES_WEB_BACKEND={FAKE} to search the offline corpus (the default under pytest and the conformance kit)."
    )


class FakeWebBackend:
    """Search and extract over a folder of pages (``corpus``, default ``HERMES_WEB_CORPUS`` or the shipped one)."""

    name = FAKE

    def __init__(self, corpus: str | os.PathLike[str] | Corpus | None = None) -> None:
        self._corpus = corpus

    @property
    def corpus(self) -> Corpus:
        if isinstance(self._corpus, Corpus):
            return self._corpus
        return load_corpus(self._corpus)

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        return {"success": True, "data": {"web": self.corpus.search(query, limit)}}

    def extract(self, urls: list[str]) -> dict[str, Any]:
        corpus = self.corpus
        results: list[dict[str, Any]] = []
        for url in urls:
            page = corpus.get(url)
            if page is None:
                results.append(
                    {
                        "url": url,
                        "title": "",
                        "content": "",
                        "error": f"page not found in the fake web corpus ({len(corpus.pages)} pages under "
                        f"{corpus.root}); add a .md or .html file with this url to the corpus to serve it",
                    }
                )
            else:
                results.append(
                    {"url": page.url, "title": page.title, "content": page.markdown, "error": None}
                )
        return {"results": results}


WEB = slot("web", _auto)
WEB.register(FAKE, FakeWebBackend)
WEB.register("firecrawl", FirecrawlBackend)
WEB.register("parallel", ParallelBackend)
WEB.register("tavily", TavilyBackend)
WEB.register("exa", ExaBackend)
WEB.register("corpus-server", CorpusServerBackend)


def web_backend() -> WebBackend:
    """The web backend calls use now."""
    return WEB.get()


def use_corpus(path: str | os.PathLike[str] | None) -> None:
    """Serve the fake web from ``path`` (a folder of pages or a results YAML); None restores the default."""
    if path is not None and not Path(path).exists():
        load_corpus(path)  # raises the clear error
    if path is None:
        os.environ.pop("HERMES_WEB_CORPUS", None)
    else:
        os.environ["HERMES_WEB_CORPUS"] = str(Path(path).resolve())


# ------------------------------------------------------------------------------------------------------ the tools
SEARCH_DESCRIPTION = (
    "Search the web for information on any topic. Returns up to 5 relevant results with titles, URLs, and "
    "descriptions."
)
EXTRACT_DESCRIPTION = (
    "Extract content from web page URLs. Returns page content in markdown format. If a URL fails or times out, "
    "use the browser tool to access it instead."
)
SEARCH_PARAMS = schema(
    {"query": {"type": "string", "description": "The search query to look up on the web"}}, ["query"]
)
EXTRACT_PARAMS = schema(
    {
        "urls": {
            "type": "array",
            "items": {"type": "string"},
            "description": "List of URLs to extract content from (max 5 URLs per call)",
            "maxItems": 5,
        }
    },
    ["urls"],
)


def web_search(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        return {"success": False, "error": "web_search needs a non-empty 'query' string."}
    return web_backend().search(query.strip(), SEARCH_LIMIT)


def web_extract(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    urls = args.get("urls")
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        return {"success": False, "error": "web_extract needs 'urls': a list of 1 to 5 URL strings."}
    return web_backend().extract(urls[:EXTRACT_LIMIT])


def register_web_tools(target: ToolRegistry) -> None:
    """``web`` (web_search, web_extract) on ``target``, and ``search`` naming web_search alone."""
    register_family(
        target,
        "web",
        "web",
        [
            ("web_search", SEARCH_DESCRIPTION, SEARCH_PARAMS, web_search),
            ("web_extract", EXTRACT_DESCRIPTION, EXTRACT_PARAMS, web_extract),
        ],
    )
    target.define_toolset("search", ["web_search"])
