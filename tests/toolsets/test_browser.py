"""The browser tools over the offline DOM model: navigate, snapshot refs, click, type, press, back, images, console,
and the error that names Playwright when no fake is asked for."""

from __future__ import annotations

import pytest

from hermes_envs.tools import ToolContext, cleanup_sandbox, registry
from hermes_envs.tools.toolsets import ToolBackendError

from .conftest import call

FERRY = "https://ferry.porthalden.invalid/timetable"


def test_navigate_returns_the_page_and_a_compact_snapshot_with_refs(task_id: str) -> None:
    result = call("browser_navigate", task_id, url=FERRY)
    assert result["success"] and result["url"] == FERRY and result["title"] == "Port Halden Ferry - Timetable"
    assert '- textbox "Destination" [ref=e3]' in result["snapshot"] and result["element_count"] == 6
    full = call("browser_snapshot", task_id, full=True)["snapshot"]
    assert "The crossing takes 55 minutes." in full


def test_type_then_submit_with_enter_fills_the_query_string(task_id: str) -> None:
    call("browser_navigate", task_id, url=FERRY)
    assert call("browser_type", task_id, ref="@e3", text="Tern Island") == {
        "success": True, "typed": "Tern Island", "element": "@e3"
    }  # fmt: skip
    assert call("browser_click", task_id, ref="e4") == {"success": True, "clicked": "@e4"}  # the checkbox
    assert call("browser_press", task_id, key="Enter") == {"success": True, "pressed": "Enter"}
    assert "08:15 Port Halden to Tern Island" in call("browser_snapshot", task_id, full=True)["snapshot"]
    back = call("browser_back", task_id)
    assert back == {"success": True, "url": FERRY}


def test_clicking_a_link_follows_it_and_unknown_refs_say_how_to_recover(task_id: str) -> None:
    call("browser_navigate", task_id, url=FERRY)
    assert call("browser_click", task_id, ref="@e6")["success"]
    assert "population was 212" in call("browser_snapshot", task_id, full=True)["snapshot"]
    missing = call("browser_click", task_id, ref="@e99")
    assert not missing["success"] and "browser_snapshot" in missing["error"]


def test_the_search_page_lists_corpus_results_as_links(task_id: str) -> None:
    snap = call("browser_navigate", task_id, url="https://search.hermes.invalid/?q=basalt+changelog")[
        "snapshot"
    ]
    assert 'link "Basalt changelog"' in snap


def test_images_console_and_simple_expressions(task_id: str) -> None:
    call("browser_navigate", task_id, url=FERRY)
    assert call("browser_get_images", task_id) == {
        "success": True,
        "images": [
            {"src": "https://ferry.porthalden.invalid/img/ferry.png", "alt": "The ferry Marlow at the pier",
             "width": 640, "height": 400}
        ],
        "count": 1,
    }  # fmt: skip
    console = call("browser_console", task_id, clear=True)
    assert [m["text"] for m in console["console_messages"]] == [
        "timetable loaded",
        "winter schedule in effect",
    ]
    assert call("browser_console", task_id)["total_messages"] == 0  # cleared
    assert (
        call("browser_console", task_id, expression="document.title")["result"]
        == "Port Halden Ferry - Timetable"
    )
    assert not call("browser_console", task_id, expression="fetch('/x')")["success"]


def test_tools_before_navigate_and_unknown_pages_fail_cleanly(task_id: str) -> None:
    assert call("browser_snapshot", task_id) == {
        "success": False,
        "error": "No page is open. Call browser_navigate first.",
    }
    result = call("browser_navigate", task_id, url="https://example.invalid/")
    assert not result["success"] and "not in the fake web corpus" in result["error"]


def test_tabs_are_per_task_and_end_with_the_sandbox(task_id: str) -> None:
    call("browser_navigate", task_id, url=FERRY)
    other = task_id + "-other"
    try:
        assert not call("browser_snapshot", other)["success"]
    finally:
        cleanup_sandbox(other)
    with ToolContext(task_id) as ctx:
        assert "Destination" in ctx.browser_snapshot()["snapshot"]  # the page the rollout left open
    assert call("browser_snapshot", task_id) == {
        "success": False,
        "error": "No page is open. Call browser_navigate first.",
    }


def test_without_playwright_the_auto_backend_names_the_package(
    task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    monkeypatch.delenv("HERMES_TOOL_BACKENDS")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ToolBackendError, match="pip install playwright.*HERMES_BROWSER_BACKEND=fake"):
        registry.dispatch("browser_navigate", {"url": FERRY}, task_id)


def test_the_browser_toolset_is_upstreams() -> None:
    names = registry.toolsets()["browser"]
    assert names == [
        "browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll", "browser_back",
        "browser_press", "browser_get_images", "browser_vision", "browser_console", "web_search",
    ]  # fmt: skip


def test_the_playwright_backend_without_the_package_says_how_to_install_it(
    task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    if importlib.util.find_spec("playwright") is not None:
        pytest.skip("playwright is installed here")
    monkeypatch.setenv("HERMES_BROWSER_BACKEND", "playwright")
    with pytest.raises(ToolBackendError, match="pip install playwright && playwright install chromium"):
        registry.dispatch("browser_navigate", {"url": FERRY}, task_id)
