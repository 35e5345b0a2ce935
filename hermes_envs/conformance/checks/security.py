"""HC9xx — security: no secrets in the env's files, and no connection beyond loopback while it runs."""

from __future__ import annotations

from pathlib import Path

from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._secrets import find_secrets
from hermes_envs.conformance._session import EnvSession

#: Files next to an env that may hold configuration (scanned for secrets along with the env itself).
CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".ini", ".cfg", ".env", ".jsonl")
_MAX_BYTES = 2_000_000


def scanned_files(s: EnvSession) -> list[Path]:
    """The env file, config files beside it, and cassettes in a ``cassettes/`` folder beside it."""
    folder = s.path.parent
    files = [s.path]
    files += sorted(
        p for p in folder.iterdir() if p.is_file() and (p.suffix in CONFIG_SUFFIXES or p.name == ".env")
    )
    cassettes = folder / "cassettes"
    if cassettes.is_dir():
        files += sorted(p for p in cassettes.rglob("*") if p.is_file() and p.suffix in CONFIG_SUFFIXES)
    return [p for p in files if p.stat().st_size <= _MAX_BYTES]


@check(
    "HC901",
    "no-secrets",
    "no secrets in the env's source, configs or cassettes",
    why="Secrets in an env repo leak with it (and with its cassettes).",
    fix="Read secrets from the environment; scrub cassettes; revoke what leaked.",
)
def no_secrets(s: EnvSession) -> list[Finding]:
    """Tokens and keys committed with the env (HF tokens, wandb keys, provider keys in configs or cassettes)."""
    from hermes_envs.conformance.checks.structure import literal_api_keys

    try:
        reported = {m.value for _line, _name, m in literal_api_keys(s.path.read_text(encoding="utf-8"))}
    except (OSError, SyntaxError):
        reported = set()
    findings = []
    for path in scanned_files(s):
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in find_secrets(text):
            if match.value in reported:
                continue  # HC107 reports api_key literals in the env's source
            where = f"{path.name if path.parent == s.path.parent else path.relative_to(s.path.parent)}:{match.line}"
            findings.append(
                Finding(
                    "HC901",
                    f"the env's files should hold no secrets; got a {match.kind} {match.redacted} at {where}.",
                    "read secrets from the environment at run time (os.environ[...]), scrub cassettes before saving "
                    "them, and revoke the exposed credential.",
                    subject=where,
                )
            )
    return findings


@check(
    "HC902",
    "loopback-only",
    "no connection beyond loopback while the env runs",
    why="Offline nodes crash; an external judge leaks rollouts and bills a model the user did not choose.",
    fix="Send model calls through self.server; fall back when a download fails.",
)
def loopback_only(s: EnvSession) -> list[Finding]:
    """Hosts the env contacts on its own (an external judge, a download in a reward): offline CI crashes, training
    leaks data and spends money on a model the user did not choose.

    Python-level calls (``socket``, ``_socket``, ``sendmsg``, DNS and reverse DNS) are refused and reported; child
    processes, forked children and native code run in a loopback-only network namespace (where one can be made), so
    they cannot connect out; in the kit's container (``hermes-envs check``, the pytest gate) their attempts (TCP
    connects, datagrams, DNS queries by name) are refused at once and named too, with the process or the env's
    line that made them."""
    # Run what we can first so every phase had its chance to connect (cached observations; failures are other
    # checks' findings).
    from hermes_envs.conformance._observations.evaluation import EvalObservation
    from hermes_envs.conformance._observations.scoring import GoldProbes
    from hermes_envs.conformance._observations.training import SetupRun, TrainingScan

    for kind in (SetupRun, TrainingScan, EvalObservation, GoldProbes):
        try:
            if kind is not GoldProbes or s.is_hermes_env():
                s.observe(kind)
        except (Exception, Skip, NotApplicable):
            pass
    # one finding per host (and early/late), naming every distinct way it was tried (the env's own line, a
    # process it started), each once
    by_target: dict[tuple[str, bool], tuple[list[str], list[str]]] = {}
    for phase, attempt in s.blocked:
        early = phase in ("import", "setup", "construct")
        # The kit's own evaluate() runs (gold answers, a baseline, traced) are all the author's evaluate().
        phase = "evaluate" if phase.startswith("evaluate") else phase
        phases, tries = by_target.setdefault((attempt.target, early), ([], []))
        if phase not in phases:
            phases.append(phase)
        tried = f"{attempt.operation} {attempt.target}"
        if tried not in tries:
            tries.append(tried)
    from hermes_envs.testing.offline import block_network

    partial = ""
    if block_network(isolate=True).isolation == "partial":
        from hermes_envs.testing._netns import unavailable_reason

        partial = (
            f" (The guard is partial here: {unavailable_reason()}; a subprocess, a forked child or native code "
            "may have connected without being seen. Run the check as root on Linux for a loopback-only network "
            "namespace.)"
        )
    findings = []
    for (target, early), (phases, tries) in by_target.items():
        findings.append(
            Finding(
                "HC902",
                f"the env should reach no host but the model server; during {', '.join(phases)} it tried "
                f"{'; and '.join(tries)}.",
                (
                    "download data in setup() with an offline fallback (or ship it with the env)."
                    if early
                    else "send model calls through self.server (the configured APIServerConfig), never a hard-coded "
                    "URL; call other services through a tool with a fake in tests."
                )
                + partial,
                Severity.WARNING if early else Severity.ERROR,
                subject=target,
            )
        )
    return findings
