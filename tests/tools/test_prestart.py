"""Pre-started sandboxes: a new task gets a shell that is already running, and no shell serves two tasks."""

from __future__ import annotations

import time

from hermes_envs.tools import cleanup_sandbox, configure_sandboxes, default_manager, get_sandbox


def _wait_for_spares(n: int) -> None:
    end = time.monotonic() + 10
    while default_manager.prepared() < n and time.monotonic() < end:
        time.sleep(0.01)


def test_a_new_task_gets_a_running_shell_that_no_other_task_had(backend):
    configure_sandboxes(backend=backend, prestart=2)
    first = get_sandbox("first")
    first.run("echo mine > f.txt; export SECRET_OF_FIRST=1")
    _wait_for_spares(2)
    second = get_sandbox("second")
    shell = second.backend.shell
    assert shell.proc is not None and shell.proc.poll() is None  # started before the task asked for it
    assert (
        second.run("echo $HERMES_TASK_ID; ls -A; echo ${SECRET_OF_FIRST:-clean}")["output"]
        == "second\nclean\n"
    )
    assert second.workdir != first.workdir and shell is not first.backend.shell
    pid = shell.proc.pid
    cleanup_sandbox("second")
    _wait_for_spares(2)
    again = get_sandbox("second")  # the same task id later: a fresh sandbox, never the cleaned-up one
    assert again is not second and again.backend.shell.proc.pid != pid
    assert again.run("ls -A; echo $HERMES_TASK_ID")["output"] == "second\n"


def test_prestart_zero_starts_shells_on_demand():
    configure_sandboxes(prestart=0)
    box = get_sandbox("t")
    time.sleep(0.1)
    assert default_manager.prepared() == 0 and box._backend is None


def test_changed_settings_drop_the_spares():
    configure_sandboxes(prestart=1)
    get_sandbox("t")
    _wait_for_spares(1)
    spare = default_manager._spares[0]  # (the one object the test needs to follow)
    configure_sandboxes(prestart=1, max_output_bytes=1000)
    assert spare.closed and not spare.tree.exists()
    box = get_sandbox("u")
    assert box.config.max_output_bytes == 1000
