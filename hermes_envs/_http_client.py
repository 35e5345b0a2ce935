"""Which HTTP client library the installed ``openai`` SDK takes: ``httpx2`` (openai 3.x) or ``httpx`` (1.x, 2.x).

openai 3 moved to httpx2 and refuses an ``httpx.Client`` as ``http_client`` (and openai 2 refuses an
``httpx2.Client``), so anything that hands the SDK a client or a transport asks this module which library to use.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

__all__ = ["sdk_http_module", "sdk_http_module_name"]


@functools.lru_cache(maxsize=1)
def sdk_http_module_name() -> str:
    """``"httpx2"`` when the installed openai SDK is built on httpx2, else ``"httpx"``."""
    try:
        base_client = importlib.import_module("openai._base_client")
    except ImportError:  # no openai at all: httpx is what our own callers can still use
        return "httpx"
    return "httpx2" if isinstance(getattr(base_client, "httpx2", None), ModuleType) else "httpx"


def sdk_http_module() -> ModuleType:
    """The HTTP client module (``httpx2`` or ``httpx``) whose ``Client``/``AsyncClient`` the SDK accepts."""
    return importlib.import_module(sdk_http_module_name())
