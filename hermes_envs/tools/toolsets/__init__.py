"""Upstream's tool families beyond ``terminal`` and ``file``, each with a fake offline backend and real ones.

Importing this package registers, on the default registry: ``web`` (web_search, web_extract), ``search``,
``browser`` (ten browser tools, plus web_search), ``vision``, ``image_gen``, ``code_execution``, ``process`` (terminal's
background processes), ``todo``, ``memory``, ``clarify``, ``delegation``, ``skills``, ``moa``, ``council``, and upstream's scenario
toolsets ``debugging`` and ``safe``. No web or browser client is imported until a backend is first used.
"""

from __future__ import annotations

from ..registry import ToolRegistry, registry
from ._backends import FAKE, offline_requested, slots, use_backend
from ._limits import ToolBackendError, ToolTimeoutError, bound_result, set_limits, timeout_for
from .browser import browser_session, close_browser, register_browser_tools
from .clarify import register_clarify_tools
from .code_execution import register_code_execution_tools
from .corpus import Corpus, Page, load_corpus
from .council import register_council_tools
from .delegation import register_delegation_tools
from .image_gen import register_image_gen_tools
from .memory import memory_entries, register_memory_tools
from .moa import register_moa_tools
from .model import ModelEndpoint, bind_env_server, bind_model_endpoint
from .process import register_process_tools
from .recording import (
    JsonlToolRecorder,
    MemoryToolRecorder,
    ReplayMissError,
    ToolRecorder,
    recorded_call,
    set_tool_recorder,
    tool_recorder,
)
from .skills import register_skills_tools
from .todo import register_todo_tools, todo_list
from .vision import register_vision_tools
from .web import register_web_tools, use_corpus, web_backend

__all__ = [
    "FAKE",
    "Corpus",
    "JsonlToolRecorder",
    "MemoryToolRecorder",
    "ModelEndpoint",
    "Page",
    "ReplayMissError",
    "ToolBackendError",
    "ToolRecorder",
    "ToolTimeoutError",
    "bind_env_server",
    "bind_model_endpoint",
    "bound_result",
    "browser_session",
    "close_browser",
    "load_corpus",
    "memory_entries",
    "offline_requested",
    "recorded_call",
    "register_toolsets",
    "set_limits",
    "set_tool_recorder",
    "slots",
    "timeout_for",
    "todo_list",
    "tool_recorder",
    "use_backend",
    "use_corpus",
    "web_backend",
]


def register_toolsets(target: ToolRegistry) -> None:
    """Register every family on ``target`` (done for the default registry on import)."""
    register_web_tools(target)
    register_browser_tools(target)
    register_vision_tools(target)
    register_image_gen_tools(target)
    register_moa_tools(target)
    register_council_tools(target)
    register_skills_tools(target)
    register_todo_tools(target)
    register_memory_tools(target)
    register_clarify_tools(target)
    register_code_execution_tools(target)
    register_delegation_tools(target)
    register_process_tools(target)
    # upstream's scenario toolsets, made of the tools above
    target.define_toolset("debugging", ["terminal", "process", "web_search", "web_extract", *_FILE_TOOLS])
    target.define_toolset(
        "safe", ["mixture_of_agents", "web_search", "web_extract", "vision_analyze", "image_generate"]
    )


_FILE_TOOLS = ["read_file", "write_file", "patch", "search_files"]

register_toolsets(registry)
