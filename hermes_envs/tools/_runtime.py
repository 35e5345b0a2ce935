"""``EnvRuntime``: what one env's tools run with (its sandbox settings, the model endpoint of model-backed tools).

Each ``HermesAgentBaseEnv`` makes one (``env.runtime``) and binds it (``runtime.bound()``) where the framework drives
the env: its run drivers, its own rollout and reward methods, the agent loop's tool calls on ``env.server``, the
ToolContext it builds, the conformance kit. Nothing rewrites the author's methods to do it. Outside any bound
runtime the module-level functions (``get_sandbox``, ``model_endpoint`` ...) use the process-wide defaults: the
settings of the env configured last, the endpoint bound with ``bind_model_endpoint`` or from the environment.

It lives with the tools (not the env) because the agent loop and ToolContext, which sit below the env, bind it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._sandbox_config import SandboxConfig

if TYPE_CHECKING:  # the toolsets package registers tools on import: not needed to define the class
    from .toolsets.model import ModelEndpoint

__all__ = ["EnvRuntime", "bound_runtime", "using_runtime"]

_BOUND: contextvars.ContextVar[EnvRuntime | None] = contextvars.ContextVar("hermes_env_runtime", default=None)


@dataclass(frozen=True)
class EnvRuntime:
    """One env's tool settings: ``sandbox`` (new sandboxes get its timeout, backend, limits ...) and
    ``model_endpoint`` (where vision, delegation, moa ... tools send model calls; None: the process default)."""

    sandbox: SandboxConfig
    model_endpoint: ModelEndpoint | None = None

    @contextlib.contextmanager
    def bound(self) -> Iterator[EnvRuntime]:
        """Within the block (this task, the tasks it starts and the tool threads they use), tools run with this
        runtime: sandboxes are created with ``sandbox`` and model-backed tools ask ``model_endpoint``."""
        from .sandbox import using_config
        from .toolsets.model import using_model_endpoint

        token = _BOUND.set(self)
        try:
            with using_config(self.sandbox), using_model_endpoint(self.model_endpoint):
                yield self
        finally:
            _BOUND.reset(token)


def bound_runtime() -> EnvRuntime | None:
    """The runtime bound in this context (None outside any env's bound runtime)."""
    return _BOUND.get()


def using_runtime(runtime: EnvRuntime | None) -> contextlib.AbstractContextManager[object]:
    """``runtime.bound()`` unless ``runtime`` is None or already the bound one (then nothing changes)."""
    if runtime is None or _BOUND.get() is runtime:
        return contextlib.nullcontext()
    return runtime.bound()
