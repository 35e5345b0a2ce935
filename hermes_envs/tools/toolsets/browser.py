"""The ``browser`` toolset: upstream's ten browser tools over one tab per task, plus web_search (upstream's browser
toolset includes it, for finding URLs).

Backends: ``fake`` (the offline DOM model over the web corpus, :mod:`.browser_dom`), and ``playwright`` (headless
Chromium through Playwright, imported on first use; ``HERMES_BROWSER_CORPUS=1`` serves the corpus pages to it, so an
author can test the same pages in a real browser). Under "auto": Playwright when it is installed, else an error
naming the package. A tab lives as long as its task's sandbox; results keep upstream's shapes.
"""

from __future__ import annotations

import atexit
import importlib.util
import threading
from typing import Any, Protocol

from ..registry import ToolRegistry
from ._backends import FAKE, slot
from ._limits import ToolBackendError, timeout_for
from ._tooling import register_family, schema
from .browser_dom import DomBrowser

__all__ = ["BrowserBackend", "BrowserSession", "browser_session", "close_browser", "register_browser_tools"]


class BrowserSession(Protocol):
    """One tab. Every method returns upstream's result dict (``success`` plus the action's fields)."""

    def navigate(self, url: str) -> dict[str, Any]: ...
    def snapshot(self, full: bool = False) -> dict[str, Any]: ...
    def click(self, ref: str) -> dict[str, Any]: ...
    def type(self, ref: str, text: str) -> dict[str, Any]: ...
    def scroll(self, direction: str) -> dict[str, Any]: ...
    def back(self) -> dict[str, Any]: ...
    def press(self, key: str) -> dict[str, Any]: ...
    def images(self) -> dict[str, Any]: ...
    def console(self, clear: bool = False, expression: str | None = None) -> dict[str, Any]: ...
    def page_text(self) -> str: ...


class BrowserBackend(Protocol):
    name: str

    def session(self, task_id: str) -> BrowserSession: ...


def _auto() -> str:
    if importlib.util.find_spec("playwright") is not None:
        return "playwright"
    raise ToolBackendError(
        "the browser tools should have a browser; got no 'playwright' package installed. Fix: pip install playwright "
        f"&& playwright install chromium, or export HERMES_BROWSER_BACKEND={FAKE} for the offline DOM model over the "
        "web corpus (the default under pytest and the conformance kit)."
    )


def _playwright() -> Any:
    from .browser_playwright import PlaywrightBrowser

    return PlaywrightBrowser()


BROWSER = slot("browser", _auto)
BROWSER.register(FAKE, DomBrowser)
BROWSER.register("dom", DomBrowser)
BROWSER.register("playwright", _playwright)

_lock = threading.Lock()
_sessions: dict[str, tuple[Any, Any]] = {}  # task id -> (session, backend)


def _prune() -> None:
    from ..sandbox import get_sandbox

    with _lock:
        stale = [task for task in _sessions if get_sandbox(task, create=False) is None]
        closing = [_sessions.pop(task) for task in stale]
    for session, _backend in closing:
        _close(session)


def _close(session: Any) -> None:
    close = getattr(session, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # pragma: no cover - best effort
            pass


def browser_session(task_id: str) -> Any:
    """The tab of ``task_id`` (opened on first use; closed when the task's sandbox is cleaned up)."""
    from ..sandbox import get_sandbox

    with _lock:
        found = _sessions.get(task_id)
    if found is not None and get_sandbox(task_id, create=False) is not None:
        return found[0]
    _prune()
    backend = BROWSER.get()
    session = backend.session(task_id)
    get_sandbox(task_id)  # the tab's lifetime is the sandbox's
    with _lock:
        _sessions[task_id] = (session, backend)
    return session


def close_browser(task_id: str | None = None) -> None:
    """Close the tab of ``task_id`` (every tab when None)."""
    with _lock:
        tasks = list(_sessions) if task_id is None else [task_id]
        closing = [_sessions.pop(t) for t in tasks if t in _sessions]
    for session, _backend in closing:
        _close(session)


atexit.register(close_browser)


def _with_session(task_id: str, action: Any) -> dict[str, Any]:
    session = browser_session(task_id)
    lock = getattr(session, "lock", None)
    if lock is None:
        return action(session)
    with lock:
        return action(session)


# ------------------------------------------------------------------------------------------------------ the tools
def browser_navigate(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    url = args.get("url")
    if not isinstance(url, str) or not url.strip():
        return {"success": False, "error": "browser_navigate needs a 'url' string."}
    return _with_session(task_id, lambda s: s.navigate(url.strip()))


def browser_snapshot(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    return _with_session(task_id, lambda s: s.snapshot(bool(args.get("full", False))))


def browser_click(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    return _with_session(task_id, lambda s: s.click(str(args.get("ref", ""))))


def browser_type(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    return _with_session(task_id, lambda s: s.type(str(args.get("ref", "")), str(args.get("text", ""))))


def browser_scroll(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    return _with_session(task_id, lambda s: s.scroll(str(args.get("direction", ""))))


def browser_back(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    return _with_session(task_id, lambda s: s.back())


def browser_press(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    return _with_session(task_id, lambda s: s.press(str(args.get("key", ""))))


def browser_get_images(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    return _with_session(task_id, lambda s: s.images())


def browser_console(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    expression = args.get("expression")
    return _with_session(
        task_id, lambda s: s.console(bool(args.get("clear", False)), str(expression) if expression else None)
    )


def browser_vision(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    """The page (its full accessibility text; the Playwright backend sends a screenshot) and the question go to the
    env's model server, whose answer is the analysis."""
    from .model import chat

    question = str(args.get("question", "")).strip()
    if not question:
        return {"success": False, "error": "browser_vision needs a 'question'."}
    session = browser_session(task_id)
    if getattr(session, "url", "") == "about:blank":
        return {"success": False, "error": "No page is open. Call browser_navigate first."}
    image = getattr(session, "screenshot_data_url", None)
    prompt = f"You are analyzing a web page.\n\nUser's question: {question}"
    if callable(image):
        content: Any = [
            {"type": "text", "text": prompt},
            {"type": "image_url", "image_url": {"url": image()}},
        ]
    else:
        content = f"{prompt}\n\nThe page (text of its accessibility tree):\n{session.page_text()}"
    reply = chat("browser_vision", [{"role": "user", "content": content}], timeout=timeout_for("browser"))
    analysis = (reply.get("content") or "").strip()
    return {
        "success": True,
        "analysis": analysis or "Vision analysis returned no content.",
        "screenshot_path": None,
    }


TOOLS = [
    (
        "browser_navigate",
        "Navigate to a URL in the browser. Initializes the session and loads the page. Must be called before other "
        "browser tools. Returns a compact page snapshot with interactive elements and ref IDs.",
        schema(
            {
                "url": {
                    "type": "string",
                    "description": "The URL to navigate to (e.g., 'https://example.com')",
                }
            },
            ["url"],
        ),
        browser_navigate,
    ),
    (
        "browser_snapshot",
        "Get a text-based snapshot of the current page's accessibility tree. Returns interactive elements with ref "
        "IDs (like @e1, @e2) for browser_click and browser_type. full=false (default): compact view with "
        "interactive elements. full=true: complete page content. Requires browser_navigate first.",
        schema(
            {
                "full": {
                    "type": "boolean",
                    "description": "If true, returns complete page content. If false (default), returns compact "
                    "view with interactive elements only.",
                    "default": False,
                }
            }
        ),
        browser_snapshot,
    ),
    (
        "browser_click",
        "Click on an element identified by its ref ID from the snapshot (e.g., '@e5'). The ref IDs are shown in "
        "square brackets in the snapshot output. Requires browser_navigate and browser_snapshot to be called first.",
        schema(
            {
                "ref": {
                    "type": "string",
                    "description": "The element reference from the snapshot (e.g., '@e5', '@e12')",
                }
            },
            ["ref"],
        ),
        browser_click,
    ),
    (
        "browser_type",
        "Type text into an input field identified by its ref ID. Clears the field first, then types the new text. "
        "Requires browser_navigate and browser_snapshot to be called first.",
        schema(
            {
                "ref": {
                    "type": "string",
                    "description": "The element reference from the snapshot (e.g., '@e3')",
                },
                "text": {"type": "string", "description": "The text to type into the field"},
            },
            ["ref", "text"],
        ),
        browser_type,
    ),
    (
        "browser_scroll",
        "Scroll the page in a direction. Use this to reveal more content that may be below or above the current "
        "viewport. Requires browser_navigate to be called first.",
        schema(
            {"direction": {"type": "string", "enum": ["up", "down"], "description": "Direction to scroll"}},
            ["direction"],
        ),
        browser_scroll,
    ),
    (
        "browser_back",
        "Navigate back to the previous page in browser history. Requires browser_navigate to be called first.",
        schema(),
        browser_back,
    ),
    (
        "browser_press",
        "Press a keyboard key. Useful for submitting forms (Enter), navigating (Tab), or keyboard shortcuts. "
        "Requires browser_navigate to be called first.",
        schema(
            {
                "key": {
                    "type": "string",
                    "description": "Key to press (e.g., 'Enter', 'Tab', 'Escape', 'ArrowDown')",
                }
            },
            ["key"],
        ),
        browser_press,
    ),
    (
        "browser_get_images",
        "Get a list of all images on the current page with their URLs and alt text. Useful for finding images to "
        "analyze with the vision tool. Requires browser_navigate to be called first.",
        schema(),
        browser_get_images,
    ),
    (
        "browser_vision",
        "Take a screenshot of the current page and analyze it with vision AI. Use this when you need to visually "
        "understand what's on the page. Requires browser_navigate to be called first.",
        schema(
            {
                "question": {
                    "type": "string",
                    "description": "What you want to know about the page visually. Be specific about what you're "
                    "looking for.",
                },
                "annotate": {
                    "type": "boolean",
                    "default": False,
                    "description": "If true, overlay numbered [N] labels on interactive elements. Each [N] maps to "
                    "ref @eN for subsequent browser commands.",
                },
            },
            ["question"],
        ),
        browser_vision,
    ),
    (
        "browser_console",
        "Get browser console output and JavaScript errors from the current page. Returns console.log/warn/error/info "
        "messages and uncaught JS exceptions. When 'expression' is provided, evaluates JavaScript in the page "
        "context and returns the result. Requires browser_navigate to be called first.",
        schema(
            {
                "clear": {
                    "type": "boolean",
                    "default": False,
                    "description": "If true, clear the message buffers after reading",
                },
                "expression": {
                    "type": "string",
                    "description": "JavaScript expression to evaluate in the page context. Example: 'document.title'",
                },
            }
        ),
        browser_console,
    ),
]


def register_browser_tools(target: ToolRegistry) -> None:
    """The ``browser`` toolset on ``target`` (it also offers web_search, as upstream's does)."""
    register_family(target, "browser", "browser", TOOLS)
    target.define_toolset("browser", ["web_search"])
