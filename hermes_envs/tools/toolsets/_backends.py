"""Which backend each tool family uses, chosen by code, then environment variables, then an "auto" rule.

Order for a family (``web``, ``browser``, ...): :func:`use_backend` from code > ``HERMES_<FAMILY>_BACKEND`` >
``HERMES_TOOL_BACKENDS=fake`` (every family offline; the pytest plugin and the conformance kit set it) > the family's
auto rule (e.g. web: the first of Firecrawl, Parallel, Tavily, Exa whose key is set, as upstream does). Backends are
created lazily, so importing a family never imports a web or browser client.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from hermes_envs._registry import Registry
from hermes_envs.errors import ConfigError

from ._limits import ToolBackendError

__all__ = ["BackendSlot", "FAKE", "offline_requested", "slot", "slots", "use_backend"]

T = TypeVar("T")
FAKE = "fake"
ALL_FAMILIES_VAR = "HERMES_TOOL_BACKENDS"


def offline_requested() -> bool:
    """True when ``HERMES_TOOL_BACKENDS=fake``: every family without its own setting uses its fake backend."""
    return os.environ.get(ALL_FAMILIES_VAR, "").strip().lower() == FAKE


class BackendSlot(Generic[T]):
    """The backends of one family by name, and the one in use (see the module docstring for the order)."""

    def __init__(self, family: str, auto: Callable[[], str]) -> None:
        self.family = family
        self.env_var = f"HERMES_{family.upper()}_BACKEND"
        self.factories: Registry[Callable[[], T]] = Registry(
            f"{family} backend",
            unknown_fix=f"set {self.env_var} to one of the names listed, or use_backend({family!r}, ...).",
        )
        self._auto = auto
        self._chosen: str | T | None = None
        self._instances: dict[str, T] = {}
        self._lock = threading.Lock()

    def register(self, name: str, factory: Callable[[], T]) -> None:
        """Make backend ``name`` available; ``factory()`` builds it on first use."""
        self.factories.register(name, factory)

    def choose(self, backend: str | T | None) -> None:
        """Use backend ``backend`` (a registered name or a ready instance) from now on; None restores the default."""
        if isinstance(backend, str) and backend not in self.factories and backend != "auto":
            self.factories.get(backend)  # raises, listing the names
        with self._lock:
            self._chosen = backend

    def name(self) -> str:
        """The name of the backend calls would use now (resolving "auto")."""
        chosen = self._chosen
        if chosen is not None and not isinstance(chosen, str):
            return type(chosen).__name__
        if isinstance(chosen, str):
            name = chosen
        else:
            name = os.environ.get(self.env_var, "").strip().lower() or "auto"
        if name == "auto":
            name = FAKE if offline_requested() else self._auto()
        return name

    def get(self) -> T:
        """The backend instance in use (built once per name)."""
        chosen = self._chosen
        if chosen is not None and not isinstance(chosen, str):
            return chosen
        name = self.name()
        with self._lock:
            if name not in self._instances:
                if name not in self.factories:
                    raise ConfigError(
                        f"{self.env_var} should name a {self.family} backend ({', '.join(self.factories.names())}); "
                        f"got {name!r}. Fix: export {self.env_var}={FAKE} for the offline backend, or one of "
                        "those names."
                    )
                self._instances[name] = self.factories.get(name)()
            return self._instances[name]

    def reset(self) -> None:
        """Forget the chosen backend and the built instances (closing those that can be closed)."""
        with self._lock:
            instances, self._instances, self._chosen = self._instances, {}, None
        for backend in instances.values():
            close = getattr(backend, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:  # pragma: no cover - best effort
                    pass


_SLOTS: Registry[BackendSlot[Any]] = Registry("tool family")


def slot(family: str, auto: Callable[[], str] | None = None) -> BackendSlot[Any]:
    """The backend slot of ``family`` (created on first call, with ``auto`` as its default rule)."""
    existing = _SLOTS.find(family)
    if existing is not None:
        return existing
    return _SLOTS.register(family, BackendSlot(family, auto or (lambda: FAKE)))


def slots() -> dict[str, BackendSlot[Any]]:
    """Every family's slot by family name."""
    return dict(_SLOTS.items())


def use_backend(family: str, backend: Any) -> None:
    """Choose the backend of ``family`` from code: a registered name ("fake", "firecrawl", ...), an instance, or
    None to go back to the environment variables and the auto rule."""
    if family not in _SLOTS:
        raise ToolBackendError(
            f"use_backend() should name a tool family ({', '.join(_SLOTS.names())}); got {family!r}. "
            "Fix: use one of those names."
        )
    _SLOTS.get(family).choose(backend)
