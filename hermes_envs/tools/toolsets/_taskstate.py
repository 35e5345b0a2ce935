"""Per-task state of the stateful families (todo lists, memory, background processes): one entry per task id,
dropped once the task's sandbox has been cleaned up (rollouts never see each other's state)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["TaskStore"]

T = TypeVar("T")


class TaskStore(Generic[T]):
    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()

    def get(self, task_id: str) -> T:
        from ..sandbox import get_sandbox

        get_sandbox(task_id)  # the state lives as long as the task's sandbox
        with self._lock:
            self._prune()
            if task_id not in self._items:
                self._items[task_id] = self._factory()
            return self._items[task_id]

    def peek(self, task_id: str) -> T | None:
        with self._lock:
            return self._items.get(task_id)

    def _prune(self) -> None:
        from ..sandbox import get_sandbox

        for task in [t for t in self._items if get_sandbox(t, create=False) is None]:
            del self._items[task]
