"""HC903 — the env leaves the machine as it found it: what it wrote, deleted, started, signalled and read there.

Judged in the kit's own process from the container's record (:mod:`hermes_envs.conformance._contained`): the
overlay's upper layer says which host paths were changed by any route (Python, a subprocess, a thread, native code,
import time), the worker's audit trace names the env's line that did it, and the namespace's process list says what
was still running after the env was closed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hermes_envs.conformance._container import Changed, ContainerResult
from hermes_envs.conformance._findings import Finding, NotApplicable, Outcome, Severity
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._secrets import KIT_CANARY_PREFIX
from hermes_envs.conformance._session import EnvSession

__all__ = ["host_findings", "host_outcome"]

_ID = "HC903"
#: The phase in which HC904 hands a raw env a reply holding code to run (checks/model_code.py).
MODEL_CODE_PHASE = "model-code"


@check(
    "HC903",
    "host-untouched",
    "the env leaves the machine it runs on as it found it",
    why=(
        "A gate runs a pull request's code on the machine it runs on: an env that writes into the checkout (or the "
        "trainer's working directory, shared by every rollout and run), "
        "leaves processes running or kills its own process group breaks the trainer's node and every later run."
    ),
    fix="Write through the rollout's sandbox or tempfile; run commands with ctx.terminal; wait for what you start.",
)
def host_untouched(s: EnvSession) -> list[Finding]:
    """Files the env writes or deletes outside its sandbox and temp folder (a cache beside the run, ``/workspace``,
    the user's checkout), processes it starts on the host and leaves running, signals to its own process group,
    and secrets it reads from the trainer's environment; each named with the env's file:line and phase."""
    raise NotApplicable(
        "judged when the env runs contained (`hermes-envs check`, `pytest --hermes-conformance`); this session "
        "ran the env in the caller's own process"
    )


def _checkout(path: Path) -> str:
    """The user's checkout holding the env: the nearest folder with ``.git`` above it, else the env's folder."""
    for folder in (path.parent, *path.parent.parents):
        if (folder / ".git").exists():
            return str(folder)
    return str(path.parent)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _ignored(path: str, base: str) -> bool:
    """The kit's own files (its container and temp folder) and the interpreter's bytecode caches."""
    return (bool(base) and _inside(path, base)) or "/__pycache__" in path or path.endswith(".pyc")


def _fold(changed: list[Changed]) -> list[tuple[Changed, int]]:
    """Changes under a folder the run created are folded into that folder: (change, paths folded into it)."""
    created = {c.path for c in changed if c.how == "created"}
    out: dict[str, list[Any]] = {}
    for c in sorted(changed, key=lambda c: c.path):
        top = next(
            (a for a in _ancestors(c.path) if a in created and os.path.dirname(a) not in created), None
        )
        key = top or c.path
        entry = out.setdefault(key, [Changed(key, "created") if top else c, 0])
        if key != c.path:
            entry[1] += 1
    return [(c, n) for c, n in out.values()]


def _ancestors(path: str) -> list[str]:
    parts = path.rstrip("/").split("/")
    return ["/".join(parts[:i]) or "/" for i in range(2, len(parts))]


def _effects(result: ContainerResult, kind: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e.get("ev") == "effect" and e.get("kind") == kind]


def host_findings(path: Path, result: ContainerResult) -> list[Finding]:
    """HC903's findings for one contained run of the env at ``path``."""
    checkout = _checkout(path)
    # The kit's own cwd is the trainer's: the worker is forked from it, and checks that run the env's evaluate()
    # move it to a scratch folder of the kit's own (ignored with the rest of its files).
    cwd = os.getcwd()
    if _inside(os.path.expanduser("~"), cwd):
        cwd = "//"  # started from $HOME (or above it): a cache under ~ is no write "beside the run"
    writes: dict[str, dict[str, Any]] = {}
    for event in result.events:
        if event.get("ev") == "effect" and event.get("kind") in ("wrote", "created", "deleted"):
            writes.setdefault(event["path"], event)
    spawns = _effects(result, "spawned")
    findings: list[Finding] = []
    changed = [c for c in result.changed if not _ignored(c.path, result.base)]
    if result.unavailable:  # traced only: the env's own writes are all we know
        changed = [
            Changed(p, e["kind"]) for p, e in writes.items() if e.get("site") and not _ignored(p, result.base)
        ]
    for change, folded in _fold(changed):
        under = [e for p, e in writes.items() if _inside(p, change.path)]
        if under and not any(e.get("site") for e in under):
            continue  # the kit's or a library's own file (a cache), not written by the env's code
        by = next((e for e in under if e.get("site")), None)
        if by is not None:
            origin = f"at {by['site']} during {by['phase']}"
        elif spawns:
            cmds = "; ".join(
                f"`{s['detail']}` (started at {s['site']} during {s['phase']})" for s in spawns[:2]
            )
            origin = f"by a process the env started: {cmds}"
        else:
            origin = "by code outside the env's files (a library, a tool or native code it called)"
        what = f"{change.path}" + (f" (and {folded} path(s) in it)" if folded else "")
        in_checkout = _inside(change.path, checkout)
        in_cwd = not in_checkout and _inside(change.path, cwd)
        place = (
            f"the user's checkout {checkout}"
            if in_checkout
            else f"the trainer's working directory {cwd} (where it was started, shared by every rollout and run)"
            if in_cwd
            else "the host"
        )
        findings.append(
            Finding(
                _ID,
                f"the env should change nothing on {place} outside its sandbox and temp folder; got {what} "
                f"{change.how} {origin}.",
                "write through the rollout's sandbox (ctx.write_file / ctx.terminal, the task's working directory)"
                " or a folder from tempfile; ship data with the env instead of writing it beside the run. (The kit "
                "ran the env contained: the host was left untouched.)",
                Severity.ERROR if in_checkout or in_cwd else Severity.WARNING,
                subject=change.path,
            )
        )
    findings += _process_findings(result, spawns)
    seen: set[str] = set()
    for event in _effects(result, "secret"):
        # secrets the kit planted itself for HC904/HC905, whose reads those checks judge
        if event["detail"] in seen or str(event["detail"]).startswith(KIT_CANARY_PREFIX):
            continue
        seen.add(event["detail"])
        findings.append(
            Finding(
                _ID,
                f"the env should need no credential of the trainer's machine to be checked; got a read of "
                f"${event['detail']} at {event['site']} during {event['phase']}.",
                "read a credential only where a service of your own needs it, never into prompts, logs or scores; "
                "in tests the kit answers the model, so the env must work with it unset.",
                Severity.WARNING,
                subject=event["detail"],
            )
        )
    return findings


def _process_findings(result: ContainerResult, spawns: list[dict[str, Any]]) -> list[Finding]:
    findings = []
    pids: dict[str, list[int]] = {}
    for pid, command in result.leftover:
        pids.setdefault(command, []).append(pid)
    for command, numbers in pids.items():
        started = next((s for s in spawns if command.split()[:1] == s["detail"].split()[:1]), None)
        started = started or next((s for s in spawns if command in s["detail"]), None)
        origin = f", started at {started['site']} during {started['phase']}" if started else ""
        count = f"{len(numbers)} processes" if len(numbers) > 1 else "a process"
        findings.append(
            Finding(
                _ID,
                f"every process the env starts should end before the env is closed; got {count} `{command}` "
                f"(pid {', '.join(map(str, numbers[:5]))} in the container){origin} still running after the "
                "checks closed the env.",
                "wait for the processes you start (subprocess.run, or Popen(...).wait() in a finally block), or run "
                "commands through ctx.terminal in the rollout's sandbox, which the kit cleans up.",
                subject=command,
            )
        )
    seen: set[tuple[str, str]] = set()
    for spawn in spawns:
        key = (spawn["detail"], spawn["site"])
        if key in seen or spawn.get("phase") == MODEL_CODE_PHASE:
            continue  # the model's code a raw env runs on purpose when HC904 asks: HC904 judges how
        seen.add(key)
        findings.append(
            Finding(
                _ID,
                f"the env's commands should run in the rollout's sandbox; got `{spawn['detail']}` started on the "
                f"trainer's machine at {spawn['site']} during {spawn['phase']}.",
                "run commands through ctx.terminal (the rollout's sandbox, with its limits and cleanup), not "
                "subprocess/os.system in the env's own process.",
                Severity.WARNING,
                subject=spawn["detail"],
            )
        )
    for event in _effects(result, "signalled"):
        findings.append(
            Finding(
                _ID,
                f"the env should signal only processes it started; got {event['detail']} (its own process or "
                f"group: the trainer) at {event['site']} during {event['phase']}.",
                "keep the pid of what you start and signal that pid; never signal 0, -1 or your own group.",
                subject=event["detail"],
            )
        )
    return findings


def host_outcome(path: Path, result: ContainerResult) -> Outcome:
    """HC903's outcome for a contained run (with a note when the run was traced but not contained)."""
    outcome = Outcome.from_findings(_ID, host_findings(path, result))
    if result.unavailable:
        outcome.note = f"traced only, not contained: {result.unavailable}"
    return outcome
