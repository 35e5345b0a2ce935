"""The session's observations, each built once: the built object, or the failure its build raised, kept and raised
again for every later reader, so an observation is attempted once per session whichever check asks first.

It knows nothing of how an observation is made (the caller passes the build); the kinds live in
:mod:`hermes_envs.conformance._observations`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from hermes_envs.conformance._findings import NotApplicable, Skip

__all__ = ["ObservationCache"]

T = TypeVar("T")

#: What a build may raise and the cache keeps: a crash of the env's code, or a Skip / NotApplicable saying why the
#: observation cannot be made.
_KEPT_FAILURES = (Exception, Skip, NotApplicable)


class ObservationCache:
    """Observations by kind (the class that builds them)."""

    def __init__(self) -> None:
        self._built: dict[type, object] = {}
        self._failures: dict[type, BaseException] = {}

    def get(self, kind: type, build: Callable[[], T]) -> T:
        """The ``kind`` observation: ``build()`` on first use, then the same read-only object (or the same
        failure) for every reader."""
        if kind in self._built:
            return cast(T, self._built[kind])
        if kind in self._failures:
            raise self._failures[kind]
        try:
            built = build()
        except _KEPT_FAILURES as exc:
            self._failures[kind] = exc
            raise
        self._built[kind] = built
        return built
