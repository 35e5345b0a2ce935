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
from ._limits import ToolBackendError, timeout_for
from ._tooling import register_family, schema
from .corpus import Corpus, load_corpus
from .recording import recorded_call

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
        results = []
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


def _http_post(url: str, payload: dict, headers: dict[str, str]) -> dict:
    import httpx

    response = httpx.post(url, json=payload, headers=headers, timeout=timeout_for("web"))
    if response.status_code >= 400:
        raise ToolBackendError(
            f"the web backend at {url} should answer 2xx; got HTTP {response.status_code}: {response.text[:300]}. "
            "Fix: check the API key and your plan's limits."
        )
    return response.json()


def _key(name: str, backend: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ToolBackendError(
            f"the {backend} web backend should have {name} set; got no such environment variable. Fix: export "
            f"{name}=..., or HERMES_WEB_BACKEND={FAKE} for the offline corpus."
        )
    return value


class FirecrawlBackend:
    """Firecrawl's REST API (``FIRECRAWL_API_KEY``; ``FIRECRAWL_API_URL`` for a self-hosted instance)."""

    name = "firecrawl"

    def _call(self, endpoint: str, payload: dict) -> dict:
        base = os.environ.get("FIRECRAWL_API_URL", "").strip().rstrip("/") or "https://api.firecrawl.dev"
        headers = {}
        if _has("FIRECRAWL_API_KEY") or not _has("FIRECRAWL_API_URL"):
            headers["Authorization"] = f"Bearer {_key('FIRECRAWL_API_KEY', self.name)}"
        return _http_post(f"{base}/v1/{endpoint}", payload, headers)

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call("search", {"query": query, "limit": limit})
            rows = raw.get("data") or []
            rows = rows.get("web", []) if isinstance(rows, dict) else rows
            return {
                "success": True,
                "data": {
                    "web": [
                        {
                            "title": r.get("title", ""),
                            "url": r.get("url", ""),
                            "description": r.get("description", ""),
                            "position": i,
                        }
                        for i, r in enumerate(rows, 1)
                    ]
                },
            }

        return recorded_call("web", "search", {"backend": self.name, "query": query, "limit": limit}, call)

    def extract(self, urls: list[str]) -> dict[str, Any]:
        def call() -> dict:
            results = []
            for url in urls:
                try:
                    raw = self._call("scrape", {"url": url, "formats": ["markdown"]}).get("data", {})
                    meta = raw.get("metadata", {})
                    results.append(
                        {
                            "url": url,
                            "title": meta.get("title", ""),
                            "content": raw.get("markdown", ""),
                            "error": None,
                        }
                    )
                except ToolBackendError as exc:
                    results.append({"url": url, "title": "", "content": "", "error": str(exc)})
            return {"results": results}

        return recorded_call("web", "extract", {"backend": self.name, "urls": urls}, call)


class TavilyBackend:
    """Tavily's REST API (``TAVILY_API_KEY``; ``TAVILY_API_URL`` for a proxy)."""

    name = "tavily"

    def _call(self, endpoint: str, payload: dict) -> dict:
        base = os.environ.get("TAVILY_API_URL", "").strip().rstrip("/") or "https://api.tavily.com"
        return _http_post(f"{base}/{endpoint}", {**payload, "api_key": _key("TAVILY_API_KEY", self.name)}, {})

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call("search", {"query": query, "max_results": limit})
            rows = [
                {
                    "title": r.get("title", ""),
                    "url": r.get("url", ""),
                    "description": r.get("content", ""),
                    "position": i,
                }
                for i, r in enumerate(raw.get("results", []), 1)
            ]
            return {"success": True, "data": {"web": rows}}

        return recorded_call("web", "search", {"backend": self.name, "query": query, "limit": limit}, call)

    def extract(self, urls: list[str]) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call("extract", {"urls": urls})
            results = [
                {
                    "url": r.get("url", ""),
                    "title": r.get("title", ""),
                    "content": r.get("raw_content") or r.get("content", ""),
                    "error": None,
                }
                for r in raw.get("results", [])
            ]
            results += [
                {
                    "url": f.get("url", ""),
                    "title": "",
                    "content": "",
                    "error": f.get("error", "extraction failed"),
                }
                for f in raw.get("failed_results", [])
            ]
            return {"results": results}

        return recorded_call("web", "extract", {"backend": self.name, "urls": urls}, call)


class ExaBackend:
    """Exa's REST API (``EXA_API_KEY``)."""

    name = "exa"

    def _call(self, endpoint: str, payload: dict) -> dict:
        return _http_post(
            f"https://api.exa.ai/{endpoint}", payload, {"x-api-key": _key("EXA_API_KEY", self.name)}
        )

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call(
                "search", {"query": query, "numResults": limit, "contents": {"highlights": True}}
            )
            rows = [
                {
                    "title": r.get("title") or "",
                    "url": r.get("url", ""),
                    "description": " ".join(r.get("highlights") or []) or r.get("text", "")[:300],
                    "position": i,
                }
                for i, r in enumerate(raw.get("results", []), 1)
            ]
            return {"success": True, "data": {"web": rows}}

        return recorded_call("web", "search", {"backend": self.name, "query": query, "limit": limit}, call)

    def extract(self, urls: list[str]) -> dict[str, Any]:
        def call() -> dict:
            raw = self._call("contents", {"urls": urls, "text": True})
            found = {r.get("url"): r for r in raw.get("results", [])}
            return {
                "results": [
                    {
                        "url": u,
                        "title": found[u].get("title") or "",
                        "content": found[u].get("text", ""),
                        "error": None,
                    }
                    if u in found
                    else {"url": u, "title": "", "content": "", "error": "extraction failed"}
                    for u in urls
                ]
            }

        return recorded_call("web", "extract", {"backend": self.name, "urls": urls}, call)


class ParallelBackend:
    """Parallel's SDK (``PARALLEL_API_KEY``; the ``parallel-web`` package, imported on first use)."""

    name = "parallel"

    def _client(self) -> Any:
        key = _key("PARALLEL_API_KEY", self.name)
        try:
            from parallel import Parallel  # type: ignore[import-not-found]
        except ImportError:
            raise ToolBackendError(
                "the parallel web backend should have the 'parallel-web' package installed; got ImportError. "
                f"Fix: pip install parallel-web, or choose another backend (HERMES_WEB_BACKEND={FAKE})."
            ) from None
        return Parallel(api_key=key)

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        def call() -> dict:
            raw = self._client().beta.search(objective=query, max_results=limit)
            rows = [
                {
                    "title": getattr(r, "title", "") or "",
                    "url": getattr(r, "url", ""),
                    "description": " ".join(getattr(r, "excerpts", None) or []),
                    "position": i,
                }
                for i, r in enumerate(getattr(raw, "results", []), 1)
            ]
            return {"success": True, "data": {"web": rows}}

        return recorded_call("web", "search", {"backend": self.name, "query": query, "limit": limit}, call)

    def extract(self, urls: list[str]) -> dict[str, Any]:
        def call() -> dict:
            raw = self._client().beta.extract(urls=urls, full_content=True)
            return {
                "results": [
                    {
                        "url": getattr(r, "url", ""),
                        "title": getattr(r, "title", "") or "",
                        "content": getattr(r, "full_content", "") or "",
                        "error": None,
                    }
                    for r in getattr(raw, "results", [])
                ]
            }

        return recorded_call("web", "extract", {"backend": self.name, "urls": urls}, call)


class CorpusServerBackend:
    """The fake corpus served by another process (``hermes-envs fake-server --web-corpus``) at
    ``HERMES_WEB_CORPUS_URL`` (``http://127.0.0.1:PORT/web``)."""

    name = "corpus-server"

    def _url(self) -> str:
        url = os.environ.get("HERMES_WEB_CORPUS_URL", "").strip().rstrip("/")
        if not url:
            raise ToolBackendError(
                "the corpus-server web backend should have HERMES_WEB_CORPUS_URL set; got none. Fix: export the URL "
                "`hermes-envs fake-server --web-corpus` prints (http://127.0.0.1:PORT/web)."
            )
        return url

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        import httpx

        response = httpx.get(self._url() + "/search", params={"q": query}, timeout=timeout_for("web"))
        response.raise_for_status()
        return response.json()

    def extract(self, urls: list[str]) -> dict[str, Any]:
        return _http_post(self._url() + "/extract", {"urls": urls}, {})


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
