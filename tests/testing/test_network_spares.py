"""Pre-started sandbox shells and the isolating network guard: a shell lives in the network namespace it was forked
in, so a task gets a pre-started one only when its own would have started in the same namespace. Spares made inside
one guard serve the next guard's tasks (a conformance run enters a guard per step), never a task outside a guard;
spares made outside never serve a task inside one."""

from __future__ import annotations

import os
import time

import pytest

from hermes_envs import _spawn_namespace
from hermes_envs.testing import loopback_namespace
from hermes_envs.testing.offline import block_network
from hermes_envs.tools.sandbox import cleanup_sandbox, configure_sandboxes, default_manager, get_sandbox

needs_namespace = pytest.mark.skipif(loopback_namespace() is None, reason="no network namespace (needs root)")
HOST_NS = os.readlink("/proc/thread-self/ns/net")


def _spare_pids(n: int) -> set[int]:
    """Wait until ``n`` spares wait for a task started now; the pids of every spare's shell."""
    end = time.monotonic() + 60
    while default_manager.prepared() < n and time.monotonic() < end:
        time.sleep(0.01)
    assert default_manager.prepared() >= n, "the pool did not pre-start its shells"
    return {box.backend.shell.proc.pid for box in list(default_manager._spares) if box.backend.shell.proc}


def _namespace_of(task_id: str) -> tuple[int, str]:
    """(the task's shell pid, the network namespace its commands run in)."""
    box = get_sandbox(task_id)
    out = box.run("readlink /proc/self/ns/net")["output"].strip()
    return box.backend.shell.proc.pid, out


@pytest.fixture
def own_probe():
    """A test installs its own namespace probe (set_probe); the one before is back when it ends."""
    with _spawn_namespace.kept_probe():
        yield


@pytest.fixture
def pool():
    configure_sandboxes(prestart=2)
    yield
    configure_sandboxes()


@needs_namespace
def test_a_shell_prestarted_inside_a_guard_serves_the_next_guard_confined(pool) -> None:
    with block_network(isolate=True):
        _, inside = _namespace_of("guarded-1")
        assert inside != HOST_NS
        spares = _spare_pids(2)
        cleanup_sandbox("guarded-1")
    with block_network(isolate=True):
        pid, ns = _namespace_of("guarded-2")
        cleanup_sandbox("guarded-2")
    assert pid in spares  # a running shell, not one started for it
    assert ns == inside  # and still confined to loopback


@needs_namespace
def test_a_shell_prestarted_inside_a_guard_is_not_handed_to_a_task_after_it(pool) -> None:
    with block_network(isolate=True):
        _namespace_of("guarded")
        spares = _spare_pids(2)
        cleanup_sandbox("guarded")
    pid, ns = _namespace_of("after")
    cleanup_sandbox("after")
    assert ns == HOST_NS  # outside the guard a task has the host's network, as without the guard
    assert pid not in spares


@needs_namespace
def test_a_shell_prestarted_outside_a_guard_is_not_handed_to_a_task_inside_it(pool) -> None:
    _namespace_of("before")
    spares = _spare_pids(2)
    cleanup_sandbox("before")
    with block_network(isolate=True):
        pid, ns = _namespace_of("guarded")
        cleanup_sandbox("guarded")
    assert ns != HOST_NS
    assert pid not in spares


def test_a_probe_that_cannot_tell_matches_no_shell(own_probe) -> None:
    """Once switching namespaces failed, threads may be in either: no pre-started shell is handed out then."""
    _spawn_namespace.set_probe(lambda: _spawn_namespace.UNKNOWN)
    assert not _spawn_namespace.fits(HOST_NS)
    assert not _spawn_namespace.fits(_spawn_namespace.UNKNOWN)
    assert _spawn_namespace.fits(None)  # a backend that keeps no process between commands
    _spawn_namespace.set_probe(lambda: HOST_NS)
    assert _spawn_namespace.fits(HOST_NS) and not _spawn_namespace.fits("net:[1]")


def test_a_spare_forked_as_the_namespace_changed_waits_for_a_task_of_its_own(pool, own_probe) -> None:
    """A refill that forks its shell just as a guard begins or ends makes a spare for the other namespace: it is
    kept (not counted as ready) and handed to the first task of its namespace, never to one of the other."""
    here = HOST_NS  # where the pool forks its shells while no guard is active
    elsewhere = "net:[1]"  # what the probe says while tasks would start elsewhere than the spare's shell
    _spawn_namespace.set_probe(lambda: here)
    get_sandbox("warm").run("true")
    spares = _spare_pids(default_manager.target_spares())
    cleanup_sandbox("warm")
    while default_manager._preparing:  # (no refill still running when the namespace changes)
        time.sleep(0.01)
    spares = _spare_pids(len(spares))
    _spawn_namespace.set_probe(lambda: elsewhere)
    assert default_manager.prepared() == 0  # none of them serves a task starting elsewhere
    box = get_sandbox("elsewhere")  # starts its own shell, and a refill whose spare is forked "here"
    assert box.backend.shell.proc is None or box.backend.shell.proc.pid not in spares
    cleanup_sandbox("elsewhere")
    end = time.monotonic() + 60
    while len(default_manager._spares) <= len(spares) and time.monotonic() < end:
        time.sleep(0.01)
    parked = {box.backend.shell.proc.pid for box in list(default_manager._spares)} - spares
    assert len(parked) == 1 and default_manager.prepared() == 0  # kept for "here", not ready for "elsewhere"
    _spawn_namespace.set_probe(lambda: here)
    assert default_manager.prepared() == len(spares) + 1
    pid, _ = _namespace_of("back-here")
    cleanup_sandbox("back-here")
    assert pid in spares
