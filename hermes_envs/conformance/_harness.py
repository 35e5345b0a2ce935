"""The room an env's code runs in under the kit: a private event loop, the fake model server (its answers switched
per probe), the network guard, a temp folder, wall time per phase and the loop watchdog.

It knows nothing of the env: :class:`~hermes_envs.conformance._env_under_test.EnvUnderTest` runs the env's code
through it. It never changes the kit process's working directory (:meth:`Harness.scratch_cwd`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_envs.conformance._probes import Responder
from hermes_envs.conformance._settings import Settings
from hermes_envs.conformance._watchdog import LoopWatchdog

if TYPE_CHECKING:
    from hermes_envs.testing import BlockedAttempt, FakeOpenAIServer

__all__ = ["Harness", "RoutingPolicy", "mirror_cwd"]

T = TypeVar("T")


class RoutingPolicy:
    """The fake server's policy: delegates to whichever responder the harness has switched on."""

    def __init__(self) -> None:
        self.current: Responder | None = None

    def __call__(self, body: dict[str, Any]) -> Any:  # (what a Responder returns)
        if self.current is None:
            return {"content": "I don't know."}
        return self.current(body)


class Harness:
    """Loop, fake server, guards, temp folder and timings of one env's session; each made on first use."""

    def __init__(self, settings: Settings, *, own_process: bool = False) -> None:
        self.settings = settings
        #: True only in the contained worker, a process that exists to run this env: there (and only there) the
        #: harness may move the process's working directory into a scratch folder (:meth:`scratch_cwd`).
        self.own_process = own_process
        #: Connections the network guard refused: (phase, attempt).
        self.blocked: list[tuple[str, BlockedAttempt]] = []
        #: Seconds spent per phase (import, construct, setup, items, evaluate, probes, rewards, ...).
        self.timings: dict[str, float] = {}
        self.phase = "import"
        #: The phase a SystemExit or KeyboardInterrupt raised by the env's code left (the contained run reports it).
        self.exit_phase = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: FakeOpenAIServer | None = None
        self._policy = RoutingPolicy()
        self._tmp: Path | None = None
        self._watchdog: LoopWatchdog | None = None
        self._on_close: list[Callable[[], None]] = []

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` first thing in :meth:`close` (helper processes a check started ahead of time)."""
        self._on_close.append(callback)

    @contextlib.contextmanager
    def offline(self) -> Iterator[None]:
        """Hub/datasets offline, wandb off, and every connection beyond loopback refused with a message (child
        processes, forks and native code confined to a loopback-only network namespace where one can be made)."""
        from hermes_envs.testing.offline import block_network, offline_mode

        guard = block_network(isolate=True)
        try:
            with offline_mode(), guard:
                yield
        finally:
            self.blocked.extend((self.phase, attempt) for attempt in guard.blocked)

    @contextlib.contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Account the block's wall time to ``phase`` (and name the phase in network / stall records)."""
        previous, self.phase = self.phase, phase
        start = time.perf_counter()
        try:
            yield
        except BaseException as exc:
            if not isinstance(exc, Exception) and not self.exit_phase:
                self.exit_phase = phase  # SystemExit / KeyboardInterrupt from the env: the phase it left in
            raise
        finally:
            self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - start
            self.phase = previous

    @property
    def watchdog(self) -> LoopWatchdog:
        """The event-loop watchdog (HC408): stalls longer than ``blocking_seconds`` caused by the env's code."""
        if self._watchdog is None:
            self._watchdog = LoopWatchdog(self.settings.blocking_seconds)
        return self._watchdog

    def run_async(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run a coroutine on the private event loop, offline."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        with self.offline(), _contained_file_tools():
            awaitable = make()
            if timeout is not None:
                awaitable = asyncio.wait_for(awaitable, timeout)
            return self._loop.run_until_complete(awaitable)

    def settle(self, timeout: float = 30.0) -> None:
        """Let tasks earlier runs left on the loop (a rollout a failed gather orphaned, say) finish, for at most
        ``timeout`` seconds; none is cancelled, so an env's own background work keeps running."""
        if self._loop is None:
            return
        pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
        if pending:
            with self.offline():
                self._loop.run_until_complete(asyncio.wait(pending, timeout=timeout))

    def close(self, before_loop_closes: Callable[[], Awaitable[None]] | None = None) -> None:
        """Stop the fake server, close the loop (first awaiting ``before_loop_closes`` on it: the env's HTTP
        clients), remove temp files; safe to call twice."""
        callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            with contextlib.suppress(Exception):
                callback()
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._loop is not None:
            # Close the env's HTTP clients on the loop they were made on, and let pending tasks finish, before the
            # loop goes: otherwise their finalizers later report "Event loop is closed".
            if before_loop_closes is not None:
                with contextlib.suppress(Exception):
                    self._loop.run_until_complete(before_loop_closes())
            with contextlib.suppress(Exception):
                pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
            self._loop = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    @contextlib.contextmanager
    def sandbox_leaks(self) -> Iterator[list[str]]:
        """Yields a list that, after the block, holds the task ids of sandboxes the block left behind (a ToolContext
        never cleaned up; HC603 reports them). They are removed then, so one leak is not reported twice."""
        from hermes_envs.tools import active_sandboxes, cleanup_sandbox

        before = set(active_sandboxes())
        leaked: list[str] = []
        try:
            yield leaked
        finally:
            leaked.extend(sorted(set(active_sandboxes()) - before))
            for task_id in leaked:
                cleanup_sandbox(task_id)

    @contextlib.contextmanager
    def scratch_cwd(self) -> Iterator[Path]:
        """Yields the working directory the env's code sees in the block.

        In the contained worker (``own_process``) that is a fresh scratch folder mirroring the user's cwd
        (:func:`mirror_cwd`), so files the env writes relative to the cwd (an ``eval_results.jsonl`` of its own)
        land there and HC903 never reports them as writes into the user's folder. Anywhere else the process's
        cwd is left alone (a chdir is seen by every thread and every other test of the process): the env's
        relative writes then reach the real cwd, which only an uncontained run (``contain = false``, a test
        building an EnvSession) allows."""
        if not self.own_process:
            yield Path.cwd()
            return
        previous = os.getcwd()
        folder = mirror_cwd(Path(tempfile.mkdtemp(prefix="cwd-", dir=self.tmp)))
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(previous)

    @property
    def tmp(self) -> Path:
        """The session's temp folder (removed by :meth:`close`)."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="hermes-conformance-"))
        return self._tmp

    @property
    def server(self) -> FakeOpenAIServer:
        """The fake model server, started on first use (strict: no default replies)."""
        if self._server is None:
            from hermes_envs.testing.fake_server import FakeOpenAIServer

            self._server = FakeOpenAIServer(policy=self._policy, strict=True)
            self._server.start()
        return self._server

    @contextlib.contextmanager
    def responding(self, responder: Responder) -> Iterator[list[Any]]:
        """Within the block the fake model answers with ``responder``; yields the requests made in the block."""
        previous = self._policy.current
        self._policy.current = responder
        start = len(self.server.calls)
        made: list[Any] = []  # (the fake server's Call records)
        try:
            yield made
        finally:
            # Model requests on both routes: /v1/chat/completions and the plain-text /v1/completions.
            made.extend(c for c in self.server.calls[start:] if c.route.rstrip("/").endswith("completions"))
            self._policy.current = previous


def mirror_cwd(folder: Path) -> Path:
    """``folder`` with every entry of the current working directory linked into it, so code run there reads the
    user's relative files (``data/eval.jsonl``) while the files it creates land in ``folder`` (writes into a linked
    folder still reach the real one)."""
    try:
        entries = list(os.scandir(os.getcwd()))
    except OSError:
        return folder
    for entry in entries:
        try:
            (folder / entry.name).symlink_to(entry.path, target_is_directory=entry.is_dir())
        except OSError:  # a name we cannot link (permissions, odd filesystems): reads of it fail as before
            pass
    return folder


@contextlib.contextmanager
def _contained_file_tools() -> Iterator[None]:
    """Sandboxes made while the kit runs the env keep absolute paths in the task's folder (``host_paths`` off).

    A HermesAgentBaseEnv gets that from its config (the kit's overrides); an env that is not one (a raw atroposlib
    env calling the tools or ToolContext itself) would otherwise get the process default, which reaches the host's
    files on ``local``. A HermesAgentBaseEnv's runtime, bound by ``EnvUnderTest.run_env``, sets its own inside this.
    """
    import dataclasses

    from hermes_envs.tools.sandbox import sandbox_config, using_config

    current = sandbox_config()
    if not current.host_paths:
        yield
        return
    with using_config(dataclasses.replace(current, host_paths=False)):
        yield
