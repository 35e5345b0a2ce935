"""Run the checks of one env class in the container (:mod:`._container`) and rebuild its report in the parent.

The worker imports the env, builds an :class:`EnvSession` and runs every selected check, streaming one event per
check (``start``, then ``outcome``) and one per effect the tracer sees. The parent keeps the report: an env that
raises ``SystemExit``, calls ``os._exit``, kills its own process group or crashes the interpreter fails the check
that was running with that cause, the checks after it are reported as not run, and HC903 (host effects) is judged
here from what the worker traced and what the overlay holds, whatever happened to the worker.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_envs.conformance._container import ContainerResult, run_contained
from hermes_envs.conformance._findings import Finding, Outcome, Severity, Status
from hermes_envs.conformance._settings import Settings

__all__ = ["ContainedRun", "ContainedSession", "HOST_CHECK", "contained_classes", "run_env_contained"]

#: The check judged in the parent from the container's record (every other check runs in the worker).
HOST_CHECK = "HC903"


def outcome_to_dict(outcome: Outcome) -> dict[str, Any]:
    """An outcome as JSON (what the worker sends)."""
    return {
        "check_id": outcome.check_id,
        "status": outcome.status.value,
        "note": outcome.note,
        "seconds": outcome.seconds,
        "findings": [
            {"check_id": f.check_id, "message": f.message, "fix": f.fix, "severity": f.severity.value,
             "subject": f.subject, "counterexample": f.counterexample}
            for f in outcome.findings
        ],
    }  # fmt: skip


def outcome_from_dict(record: dict[str, Any]) -> Outcome:
    findings = [
        Finding(
            f["check_id"],
            f["message"],
            f["fix"],
            Severity(f["severity"]),
            f["subject"],
            f.get("counterexample"),
        )
        for f in record["findings"]
    ]
    return Outcome(record["check_id"], Status(record["status"]), findings, record["note"], record["seconds"])


#: Set in the worker's environment: the processes the env starts inherit it.
_MARK = "HERMES_CONFORMANCE_CONTAINED"
#: In the environment of every process a kit sandbox started (its shells and what ran in them): those are the kit's,
#: killed by the sandbox's own cleanup, never the env's leftover. (The mark alone cannot tell them apart: on the
#: ``local`` backend a shell gets the variables the process set since it started, the mark among them.)
_SANDBOX_MARK = b"HERMES_SANDBOX_ID="
#: How long a process found still running gets to end (one being killed as the env closed, on a loaded machine).
_LEFTOVER_GRACE_SECONDS = 5.0


def _env_processes() -> dict[int, str]:
    """pid -> command line of the env's live processes in the namespace (its init, this worker and the kit's
    sandbox processes aside)."""
    me = os.getpid()
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (1, me):
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{entry}/environ", "rb") as fh:
                environ = fh.read().split(b"\0")
        except OSError:
            continue
        marked = f"{_MARK}=1".encode() in environ
        kits = any(var.startswith(_SANDBOX_MARK) for var in environ)
        if state != "Z" and argv and marked and not kits:
            out[int(entry)] = " ".join(argv)[:160]
    return out


def _leftover_processes(grace: float = _LEFTOVER_GRACE_SECONDS) -> list[tuple[int, str]]:
    """(pid, command line) of the env's processes still running in the namespace once those ending anyway (within
    ``grace`` seconds) are gone: an error names only a process that stays."""
    found = _env_processes()
    end = time.monotonic() + grace
    while found and time.monotonic() < end:
        time.sleep(0.05)
        now = _env_processes()
        found = {pid: cmd for pid, cmd in found.items() if now.get(pid) == cmd}
    return sorted(found.items())


def make_worker(path: str, class_name: str | None, settings: dict[str, Any], discover_only: bool) -> Any:
    """The function the container runs (built from JSON arguments): the env's session, events to ``fd``."""

    def run(fd: int, kit_tmp: str) -> None:
        import faulthandler
        import tempfile

        import hermes_envs.conformance.checks  # noqa: F401  (registers the catalogue: a fresh interpreter has none)
        from hermes_envs.conformance._session import EnvSession
        from hermes_envs.conformance._sites import author_site
        from hermes_envs.conformance._tracer import Channel, Tracer
        from hermes_envs.env import find_env_classes
        from hermes_envs.errors import EnvLoadError

        os.makedirs(kit_tmp, exist_ok=True)
        os.environ["TMPDIR"] = tempfile.tempdir = kit_tmp
        os.environ[_MARK] = "1"
        fault = open(os.path.join(kit_tmp, "fault.txt"), "w")  # open until the process ends
        faulthandler.enable(fault)
        contained = os.getpid() == 2  # the namespace's init is 1, the worker its first child
        if contained:
            from hermes_envs.testing._netns import adopt_current_namespace

            adopt_current_namespace()
        channel = Channel(fd)
        sys.stdout, sys.stderr = _Forward(channel, "stdout"), _Forward(channel, "stderr")
        session = EnvSession(path, class_name, Settings(**settings), own_process=True)
        tracer = Tracer(channel, lambda: session.phase, quiet=(kit_tmp,))
        tracer.install()
        if contained:
            from hermes_envs.conformance._tun import start as start_tun
            from hermes_envs.testing._network_guard import BlockedAttempt

            def seen(operation: str, host: str, port: int | None, who: str) -> None:
                session.blocked.append((session.phase, BlockedAttempt(host, port, operation)))

            start_tun(seen)
        try:
            session.load()
            names: list[str] | None = [c.__name__ for c in find_env_classes(session.module)]
        except EnvLoadError:
            names = None
        except BaseException as exc:  # SystemExit at import time: the first check reports it
            cause = f"{type(exc).__name__}({', '.join(map(repr, exc.args))})"
            channel.send(
                {"ev": "crash", "cause": cause, "site": author_site(exc, Path(path)), "phase": "import"}
            )
            return
        tracer.label = session.label
        channel.send(
            {"ev": "classes", "names": names, "label": session.label, "selected": session.selected()}
        )
        if discover_only:
            return
        for check_id in session.selected():
            if check_id == HOST_CHECK:
                continue
            channel.send({"ev": "start", "check": check_id})
            try:
                outcome = session.run(check_id)
            except (
                BaseException
            ) as exc:  # SystemExit, KeyboardInterrupt from the env's code: the run ends here
                cause = f"{type(exc).__name__}({', '.join(map(repr, exc.args))})"
                channel.send(
                    {"ev": "crash", "check": check_id, "cause": cause, "site": author_site(exc, Path(path)),
                     "phase": session.exit_phase or session.phase}
                )  # fmt: skip
                return
            channel.send({"ev": "outcome", "record": outcome_to_dict(outcome)})
            # As run_all does: once the env has loaded, the checks still to run start their background work
            # (HC404's other-seed interpreters, whose import then overlaps the checks before HC404).
            session.prepare_pending()
        with session.timed("close"), contextlib.suppress(Exception):
            session.close()
            from hermes_envs.tools.sandbox import cleanup_all_sandboxes

            cleanup_all_sandboxes()
        channel.send({"ev": "timings", "timings": dict(session.timings)})
        if contained:
            channel.send({"ev": "leftover", "processes": _leftover_processes()})
        channel.send({"ev": "done"})

    return run


class _Forward(io.TextIOBase):
    """The worker's ``sys.stdout`` / ``sys.stderr``: what the env and its libraries print goes to the parent, which
    writes it to its own stream (so ``hermes-envs check`` keeps it out of the report unless ``-v``)."""

    def __init__(self, channel: Any, stream: str) -> None:
        self.channel, self.stream = channel, stream

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            self.channel.send({"ev": "output", "stream": self.stream, "text": text})
        return len(text)


def _echo(event: dict[str, Any]) -> None:
    if event.get("ev") == "output":
        stream = sys.stderr if event.get("stream") == "stderr" else sys.stdout
        with contextlib.suppress(Exception):
            stream.write(event.get("text", ""))


_TARGET = f"{__name__}:make_worker"


def _args(path: Path, class_name: str | None, settings: Settings, discover_only: bool) -> list[Any]:
    return [str(path), class_name, dataclasses.asdict(settings), discover_only]


@dataclass
class ContainedRun:
    """One env class run in the container, as the parent saw it."""

    label: str
    names: list[str] | None
    outcomes: list[Outcome]
    seconds: float
    timings: dict[str, float] = field(default_factory=dict)
    container: ContainerResult = field(default_factory=ContainerResult)


def contained_classes(path: Path, wanted: str | None, settings: Settings) -> tuple[list[str] | None, str]:
    """The env classes of ``path`` (None when it does not import) and the label, learned by importing it in the
    container (its import-time code never runs in the kit's process)."""
    result = run_contained(
        _TARGET,
        _args(path, wanted, settings, True),
        on_event=_echo,
        hang_seconds=settings.hang_seconds,
        namespaces=settings.namespaces,
    )
    for event in result.events:
        if event.get("ev") == "classes":
            return event["names"], event["label"]
    return None, f"{path.name}::{wanted}" if wanted else path.name


def _say_once(why: str) -> None:
    """Warn that the run is traced only; Python's warning filters show each reason once per place (no list of ours
    that a second run, or a test, would have to reset)."""
    if why:
        warnings.warn(
            f"hermes-envs: the env under test runs traced but NOT contained: {why}. Its writes, processes and "
            "connections reach this machine; run the check as root on Linux to contain them.",
            RuntimeWarning,
            stacklevel=3,
        )


def run_env_contained(path: Path, class_name: str | None, settings: Settings) -> ContainedRun:
    """Run every selected check on one env class in the container; the outcomes, in check-id order."""
    from hermes_envs.conformance.checks.host import host_outcome

    start = time.perf_counter()
    result = run_contained(
        _TARGET,
        _args(path, class_name, settings, False),
        on_event=_echo,
        hang_seconds=settings.hang_seconds,
        namespaces=settings.namespaces,
    )
    _say_once(result.unavailable)
    label = f"{path.name}::{class_name}" if class_name else path.name
    names: list[str] | None = None
    selected: list[str] = []
    outcomes: dict[str, Outcome] = {}
    running = ""
    crash: dict[str, Any] | None = None
    done = False
    timings: dict[str, float] = {}
    for event in result.events:
        kind = event.get("ev")
        if kind == "classes":
            names, label, selected = event["names"], event["label"], event["selected"]
        elif kind == "start":
            running = event["check"]
        elif kind == "outcome":
            outcome = outcome_from_dict(event["record"])
            outcomes[outcome.check_id] = outcome
            running = ""
        elif kind == "crash":
            crash = event
        elif kind == "timings":
            timings = event["timings"]
        elif kind == "leftover":
            result.leftover = [(int(pid), str(cmd)) for pid, cmd in event["processes"]]
        elif kind == "done":
            done = True
    if not selected:
        from hermes_envs.conformance._schedule import selected_checks

        selected = selected_checks(settings)
    if not done:
        cause = _cause(result, crash)
        pending = [i for i in selected if i not in outcomes and i != HOST_CHECK]
        running = running or (pending[0] if pending else "")
        if running:
            outcomes[running] = Outcome(
                running, Status.FAILED, [_ended_finding(running, cause, label, result)]
            )
        for check_id in selected:
            if check_id not in outcomes and check_id != HOST_CHECK:
                where = f"during {running}" if running else "before its checks ran"
                outcomes[check_id] = Outcome(
                    check_id, Status.SKIPPED, note=f"not run: the env's process ended {where} ({cause})"
                )
    if HOST_CHECK in selected:
        outcomes[HOST_CHECK] = host_outcome(path, result)
    ordered = [outcomes[i] for i in selected if i in outcomes]
    return ContainedRun(label, names, ordered, time.perf_counter() - start, timings, result)


def _ended_finding(check_id: str, cause: str, label: str, result: ContainerResult) -> Finding:
    """The finding of the check that was running when the env's process ended (or hung and was stopped)."""
    if result.hung:
        return Finding(
            check_id,
            f"the env should finish what this check asks of it; {cause}.",
            "look for a wait that never ends in the env's code for this phase (a loop without an exit, a queue or "
            "lock never released, a server or subprocess that never answers) and bound it with a timeout; if the "
            "env is only slow, raise hang_seconds under [tool.hermes-conformance].",
            subject=label,
        )
    return Finding(
        check_id,
        f"the env's code should never end the process it runs in; while this check ran, {cause}.",
        "never end the process from the env's code (sys.exit, os._exit, signals to its own process group): raise "
        "an exception, or return a score of 0, and let the trainer decide.",
        subject=label,
    )


def _cause(result: ContainerResult, crash: dict[str, Any] | None) -> str:
    """What ended the worker, in the author's terms."""
    if result.hung:
        return (
            f"it made no progress for {result.hung:.0f} s (no check finished, nothing was printed) and the kit "
            "stopped it"
        )
    if crash is not None:
        site = f" at {crash['site']}" if crash.get("site") else ""
        return f"the env's code raised {crash['cause']}{site} during {crash.get('phase') or 'the check'}"
    ends = [e for e in result.events if e.get("ev") == "effect" and e.get("kind") in ("exit", "signalled")]
    if ends:
        last = ends[-1]
        site = f" at {last['site']}" if last.get("site") else ""
        what = f"called {last['detail']}" if last["kind"] == "exit" else f"sent {last['detail']}"
        return (
            f"the env's code {what}{site} during {last.get('phase')} (the process {result.ended or 'ended'})"
        )
    if result.fault:
        lines = [ln.strip() for ln in result.fault.splitlines() if ln.strip().startswith("File ")]
        where = f"; innermost frame: {lines[0]}" if lines else ""
        return f"the process crashed ({result.ended or 'ended'}){where}"
    return f"the process {result.ended or 'ended without a word'}"


class ContainedSession:
    """What the pytest gate needs of a session (``selected``, ``run``, ``label``, ``path``, ``close``), with the
    env run in the container: the first ``run`` runs every selected check there, later ones read the outcomes."""

    def __init__(self, path: str | Path, class_name: str | None, settings: Settings, label: str = "") -> None:
        self.path = Path(path).resolve()
        self.class_name = class_name
        self.settings = settings
        self.label = label or (f"{self.path.name}::{class_name}" if class_name else self.path.name)
        self._run: ContainedRun | None = None

    def selected(self) -> list[str]:
        from hermes_envs.conformance._schedule import selected_checks

        return selected_checks(self.settings)

    @property
    def timings(self) -> dict[str, float]:
        """The phase times the worker reported (the pytest report records them); empty before the run."""
        return dict(self._run.timings) if self._run is not None else {}

    def run(self, check_id: str) -> Outcome:
        if self._run is None:
            self._run = run_env_contained(self.path, self.class_name, self.settings)
            self.label = self._run.label
        for outcome in self._run.outcomes:
            if outcome.check_id == check_id:
                return outcome
        return Outcome(check_id, Status.SKIPPED, note="not run in the container")

    def close(self) -> None:
        """Nothing to close: the container ended with its run."""
