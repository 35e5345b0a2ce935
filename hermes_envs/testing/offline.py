"""Run without the network: the shipped offline tokenizer, offline env vars, and a socket-level network guard.

* :func:`offline_tokenizer_path` / :func:`load_offline_tokenizer` -- a tiny ChatML/Hermes byte-level BPE tokenizer
  shipped as package data. Pass the path as ``--env.tokenizer_name`` so atroposlib never goes to the Hub.
* :func:`offline_environ` / :func:`offline_mode` -- env vars that keep Hugging Face, wandb and friends offline.
* :func:`block_network` / :class:`NetworkGuard` -- make any connection (or DNS lookup) beyond loopback raise
  :class:`NetworkBlockedError` immediately, before a packet leaves the machine. Python-level calls are caught by a
  patch of :mod:`socket` and by an audit hook (PEP 578), which also sees ``_socket`` calls, ``sendmsg`` and
  reverse lookups. With ``isolate=True`` child processes, forked children and native (ctypes) code run in a
  loopback-only network namespace (:mod:`hermes_envs.testing._netns`) where one is available; without one the guard
  is partial (Python-level calls in this process only), and :attr:`NetworkGuard.isolation` says so. The guard
  itself lives in :mod:`hermes_envs.testing._network_guard`; this module is where users import it from.

This module imports only the standard library at import time; ``transformers`` is imported on first use.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_envs.errors import HermesEnvsError
from hermes_envs.testing._network_audit import NetworkGuardPartialWarning
from hermes_envs.testing._network_guard import (
    DEFAULT_ALLOW_HOSTS,
    BlockedAttempt,
    NetworkBlockedError,
    NetworkGuard,
    block_network,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

__all__ = [
    "DEFAULT_ALLOW_HOSTS",
    "BlockedAttempt",
    "NetworkBlockedError",
    "NetworkGuard",
    "NetworkGuardPartialWarning",
    "block_network",
    "load_offline_tokenizer",
    "offline_environ",
    "offline_mode",
    "offline_tokenizer_path",
]

_TOKENIZER_DIR = Path(__file__).resolve().parent / "assets" / "tokenizer"

# ---------------------------------------------------------------------------------------------------------------
# Offline tokenizer
# ---------------------------------------------------------------------------------------------------------------


def offline_tokenizer_path() -> str:
    """Absolute path of the shipped tokenizer folder (usable as ``--env.tokenizer_name``)."""
    if not (_TOKENIZER_DIR / "tokenizer.json").is_file():
        raise HermesEnvsError(
            f"the offline tokenizer is missing from {_TOKENIZER_DIR}; reinstall hermes-envs, or rebuild it "
            "with `python scripts/build_tokenizer.py` in a source checkout"
        )
    return str(_TOKENIZER_DIR)


@functools.lru_cache(maxsize=1)
def load_offline_tokenizer() -> PreTrainedTokenizerFast:
    """Load the shipped tokenizer (cached: every call returns the same object, so do not mutate it)."""
    from transformers import AutoTokenizer

    # (the shipped tokenizer.json loads as a fast tokenizer)
    return AutoTokenizer.from_pretrained(offline_tokenizer_path(), local_files_only=True)  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------------------------
# Offline environment variables
# ---------------------------------------------------------------------------------------------------------------

_OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "WANDB_MODE": "disabled",
    "WANDB_SILENT": "true",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "HERMES_TOOL_BACKENDS": "fake",  # web, browser, ... tools use their offline backends (hermes_envs.tools.toolsets)
}

# Libraries that read their offline switch into a module constant at import time. If one is already imported,
# setting the env var alone has no effect, so offline_mode() also flips these (only if already imported).
_MODULE_FLAGS: tuple[tuple[str, str, Any], ...] = (
    ("huggingface_hub.constants", "HF_HUB_OFFLINE", True),
    ("huggingface_hub.constants", "HF_HUB_DISABLE_TELEMETRY", True),
    ("datasets.config", "HF_HUB_OFFLINE", True),
    ("datasets.config", "HF_DATASETS_OFFLINE", True),
)


def offline_environ() -> dict[str, str]:
    """Env vars for an offline run, e.g. ``subprocess.run(..., env={**os.environ, **offline_environ()})``."""
    return dict(_OFFLINE_ENV)


@contextmanager
def offline_mode() -> Iterator[dict[str, str]]:
    """Set :func:`offline_environ` in ``os.environ`` (and already-imported HF flags); restore everything on exit."""
    saved_env = {key: os.environ.get(key) for key in _OFFLINE_ENV}
    saved_flags: list[tuple[Any, str, Any]] = []
    os.environ.update(_OFFLINE_ENV)
    for module_name, attr, value in _MODULE_FLAGS:
        module = sys.modules.get(module_name)
        if module is not None and hasattr(module, attr):
            saved_flags.append((module, attr, getattr(module, attr)))
            setattr(module, attr, value)
    try:
        yield offline_environ()
    finally:
        for module, attr, old in reversed(saved_flags):
            setattr(module, attr, old)
        for key, old_value in saved_env.items():
            if old_value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old_value
