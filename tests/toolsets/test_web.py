"""web_search / web_extract: the fake corpus (shipped and author-extended), the real backends' selection and errors,
and recording a real backend's calls so they replay offline."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from hermes_envs.tools import registry
from hermes_envs.tools.toolsets import (
    MemoryToolRecorder,
    ToolBackendError,
    tool_recorder,
    use_backend,
    use_corpus,
)

from .conftest import call

LIGHTHOUSE = "https://en.wikipedia.invalid/wiki/Tern_Island_Lighthouse"


def test_search_returns_upstreams_shape_ranked_over_the_shipped_corpus(task_id: str) -> None:
    result = call("web_search", task_id, query="When was the Tern Island lighthouse first lit?")
    assert result["success"] is True
    rows = result["data"]["web"]
    assert rows[0] == {
        "title": "Tern Island Lighthouse",
        "url": LIGHTHOUSE,
        "description": "The Tern Island Lighthouse is a stone lighthouse on Tern Island, first lit in 1874.",
        "position": 1,
    }
    assert [r["position"] for r in rows] == list(range(1, len(rows) + 1)) and len(rows) <= 5
    assert call("web_search", task_id, query="When was the Tern Island lighthouse first lit?") == result


def test_extract_returns_markdown_and_a_per_url_error_for_pages_not_in_the_corpus(task_id: str) -> None:
    result = call("web_extract", task_id, urls=[LIGHTHOUSE + "#Keepers", "https://nowhere.invalid/x"])
    found, missing = result["results"]
    assert found["url"] == LIGHTHOUSE and found["error"] is None
    assert "first lit in 1874" in found["content"] and found["content"].startswith("# Tern Island Lighthouse")
    assert missing["content"] == "" and "not found in the fake web corpus" in missing["error"]


def test_an_author_extends_the_web_with_a_folder_of_pages_and_pinned_results(
    tmp_path: Path, task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kettle.md").write_text(
        "---\nurl: https://shop.invalid/kettle\ntitle: Kettle K2\n---\n# Kettle K2\n\nThe K2 boils a litre in 96 s.\n"
    )
    (tmp_path / "page.html").write_text(
        '<html><head><title>Mugs</title><link rel="canonical" href="https://shop.invalid/mugs"></head>'
        "<body><h1>Mugs</h1><p>Stoneware mugs hold 350 ml.</p></body></html>"
    )
    (tmp_path / "results.yaml").write_text(
        "queries:\n  - query: best kettle\n    results:\n      - {url: 'https://shop.invalid/kettle', title: K2}\n"
    )
    monkeypatch.setenv("HERMES_WEB_CORPUS", str(tmp_path))
    assert call("web_search", task_id, query="Best  Kettle")["data"]["web"] == [
        {"url": "https://shop.invalid/kettle", "title": "K2", "position": 1}
    ]
    assert (
        call("web_search", task_id, query="stoneware mugs")["data"]["web"][0]["url"]
        == "https://shop.invalid/mugs"
    )
    pages = call("web_extract", task_id, urls=["https://shop.invalid/mugs"])["results"]
    assert "350 ml" in pages[0]["content"] and pages[0]["title"] == "Mugs"
    use_corpus(None)


def test_the_schemas_are_upstreams() -> None:
    search = registry.get("web_search").schema()["function"]
    extract = registry.get("web_extract").schema()["function"]
    assert search["parameters"] == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "The search query to look up on the web"}},
        "required": ["query"],
    }
    assert extract["parameters"]["properties"]["urls"]["maxItems"] == 5
    assert registry.toolsets()["search"] == ["web_search"]


def test_without_a_key_the_real_backend_names_the_keys_to_set(
    task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HERMES_TOOL_BACKENDS")
    for key in (
        "FIRECRAWL_API_KEY",
        "FIRECRAWL_API_URL",
        "PARALLEL_API_KEY",
        "TAVILY_API_KEY",
        "EXA_API_KEY",
    ):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(ToolBackendError, match="FIRECRAWL_API_KEY.*TAVILY_API_KEY.*HERMES_WEB_BACKEND=fake"):
        registry.dispatch("web_search", {"query": "x"}, task_id)
    monkeypatch.setenv("HERMES_WEB_BACKEND", "exa")
    with pytest.raises(ToolBackendError, match="exa web backend should have EXA_API_KEY set"):
        registry.dispatch("web_search", {"query": "x"}, task_id)


def test_an_unknown_backend_name_lists_the_known_ones(task_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_WEB_BACKEND", "bing")
    with pytest.raises(ValueError, match="exa, fake, firecrawl, parallel, tavily"):
        registry.dispatch("web_search", {"query": "x"}, task_id)


@respx.mock
def test_a_real_backend_call_is_recorded_then_replayed_with_no_network(
    task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-secret")
    route = respx.post("https://api.tavily.com/search").mock(
        return_value=httpx.Response(
            200, json={"results": [{"title": "T", "url": "https://t.invalid", "content": "c"}]}
        )
    )
    use_backend("web", "tavily")
    recorder = MemoryToolRecorder()
    with tool_recorder(recorder):
        first = call("web_search", task_id, query="tern")
    assert first["data"]["web"] == [
        {"title": "T", "url": "https://t.invalid", "description": "c", "position": 1}
    ]
    assert json.loads(route.calls[0].request.content)["api_key"] == "tvly-secret"
    assert "tvly-secret" not in json.dumps(recorder.calls)  # the key never reaches the recording
    replayed = MemoryToolRecorder(replay_only=True)
    replayed.calls = dict(recorder.calls)
    with tool_recorder(replayed):
        assert call("web_search", task_id, query="tern") == first
    assert route.call_count == 1 and replayed.hits == 1
