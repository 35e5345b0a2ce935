"""HC904 — a raw env that runs the model's code runs it apart from the trainer: not in the trainer's working
directory, not with the trainer's environment (its API keys), and leaves no folder behind.

The model's reply is untrusted input. A raw atroposlib env that executes a code block from it (a snippet judged by
asserts) hands that code whatever the child process inherits. The kit answers every completion with a code block
that records where it ran and whether it could see a secret the kit planted in the environment, and writes one file
in its working directory; after the group, those records say what any model's code could have done.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._secrets import KIT_CANARY_PREFIX, planted_secret
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance.checks.host import MODEL_CODE_PHASE

#: The secret the kit plants in the trainer's environment while the model's code may run.
CANARY = f"{KIT_CANARY_PREFIX}CANARY_API_KEY"
#: The file the model's code writes in its own working directory.
MARKER = "hermes-kit-model-code.txt"


def _code(out: Path) -> str:
    """A harmless program that records, under ``out``, where it ran and whether it saw :data:`CANARY`."""
    return (
        "import os\n"
        f"_out = {str(out)!r}\n"
        "with open(os.path.join(_out, 'ran-%d' % os.getpid()), 'w') as _f:\n"
        "    _f.write(os.getcwd())\n"
        f"with open({MARKER!r}, 'w') as _f:\n"
        "    _f.write('written by the model')\n"
        f"if os.environ.get({CANARY!r}):\n"
        "    open(os.path.join(_out, 'saw-secret'), 'w').close()\n"
    )


def _replying(code: str) -> Any:
    """Every completion of every request is the code in a fenced python block (the shape code envs parse)."""
    text = f"Here is my solution.\n\n```python\n{code}```\n"

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"content": text} for _ in range(max(1, int(body.get("n") or 1)))]}

    return respond


@check(
    "HC904",
    "model-code-contained",
    "a raw env runs the model's code away from the trainer's cwd and secrets, and cleans up after it",
    requires=("HC201",),
    why=(
        "The model's reply is untrusted code: run in the trainer's working directory it writes and deletes files "
        "in the user's checkout; run with the trainer's environment it reads API keys and can print them into the "
        "training data; run in temporary folders never removed it fills the disk, one folder per completion. "
        "Evidence: the kit answers with a python block that records its cwd and whether it sees a secret the kit "
        "planted (errors: what any model's code could do); a folder left behind is a warning."
    ),
    fix=(
        "Run it with cwd= a fresh tempfile folder removed afterwards, a minimal env= ({'PATH': ...}) and python -I, "
        "or in a sandbox."
    ),
)
def model_code_contained(s: EnvSession) -> list[Finding]:
    """A raw env that executes the model's code in the trainer's working directory (the code writes and deletes
    files in the user's checkout), with the trainer's whole environment (the code can read API keys and print them
    into the training data), or in temporary folders it never removes (one per completion until the disk fills)."""
    from hermes_envs.conformance.checks.trajectory import eval_only

    if s.is_hermes_env():
        raise NotApplicable("an agent env runs the model's code through its tools, in the rollout's sandbox")
    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    item = probe_items(s)[0]
    out = Path(tempfile.mkdtemp(prefix="model-code-", dir=s.tmp))
    with planted_secret(CANARY):
        with s.scratch_cwd() as cwd, s.sandbox_leaks(), s.responding(_replying(_code(out))):
            try:
                s.run_env(lambda e: e.collect_trajectories(item), timeout=120, phase=MODEL_CODE_PHASE)
            except Exception as exc:
                raise Skip(f"collect_trajectories(item) raised {type(exc).__name__}: {exc}") from None
            ran = sorted(out.glob("ran-*"))
            cwd = cwd.resolve()
            places = [Path(p.read_text()).resolve() for p in ran]
    if not ran:
        raise NotApplicable("the env never ran a python code block of the model's reply")
    findings: list[Finding] = []
    where = f"the model's code (run {len(ran)} time(s) for one group)"
    if any(p == cwd for p in places):
        findings.append(
            Finding(
                "HC904",
                f"the model's code should run in a throw-away working directory; {where} ran in the trainer's own "
                f"working directory (cwd) and wrote {MARKER!r} there: on a real run, whatever files the model's code "
                "writes or deletes land in the trainer's checkout.",
                "pass cwd= a fresh tempfile.mkdtemp() folder (removed afterwards) to subprocess.run, or run the code "
                "in a sandbox.",
                subject="working directory of the model's code",
            )
        )
    if (out / "saw-secret").exists():
        findings.append(
            Finding(
                "HC904",
                f"the model's code should not see the trainer's environment; {where} could read ${CANARY}, a secret "
                "the kit set in the trainer's environment: the child inherits every API key and token, which the "
                "model's code can read and print into the training data.",
                "pass a minimal env= to subprocess.run (e.g. {'PATH': '/usr/bin:/bin'}) and run python with -I.",
                subject="environment of the model's code",
            )
        )
    left = [p for p in dict.fromkeys(places) if p != cwd and p.is_dir() and (p / MARKER).exists()]
    if left:
        findings.append(
            Finding(
                "HC904",
                f"each temporary directory made for the model's code should be removed after the run; "
                f"{len(left)} of the {len(set(places))} working directories of {where} were left behind (not "
                f"removed), e.g. {left[0]}: a training run leaves one per completion until the disk fills (a "
                "warning: an env may keep them on purpose for inspection).",
                "use `with tempfile.TemporaryDirectory() as workdir:` or shutil.rmtree(workdir) in a finally block.",
                Severity.WARNING,
                subject="temporary directories of the model's code",
            )
        )
    return findings
