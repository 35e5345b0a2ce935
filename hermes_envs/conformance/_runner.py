"""Run the catalogue on env files without pytest (``hermes-envs check``), and the shared discovery/settings code.

The pytest plugin and the CLI find env files, read settings and run checks through the same functions here, so both
report the same findings.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hermes_envs.conformance.checks  # noqa: F401  (registers the catalogue of checks)
from hermes_envs.conformance._findings import Outcome, Status
from hermes_envs.conformance._registry import CHECKS, all_checks
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._settings import Settings
from hermes_envs.env import defines_env_class, env_files_in
from hermes_envs.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def split_target(target: str) -> tuple[Path, str | None]:
    """``path/env.py::ClassName`` -> (path, "ClassName"); a plain path -> (path, None)."""
    path, sep, name = str(target).partition("::")
    return Path(path), (name or None) if sep else None


def discover(targets: list[str], *, cli: bool = False) -> list[tuple[Path, str | None]]:
    """Expand targets (files, folders, ``file::Class``) into env files, folders searched recursively.

    ``cli`` words a missing path for ``hermes-envs check`` instead of ``pytest --hermes-conformance``.
    """
    found: list[tuple[Path, str | None]] = []
    for target in targets:
        path, name = split_target(target)
        if path.is_dir():
            found.extend((p, None) for p in env_files_in(path))
        elif path.exists():
            # A named file with no env class (a helper module pre-commit passes along) holds no environment,
            # as a folder without env files does. `FILE::Class` and a file named like an env (`*_env.py`) are
            # meant as envs: HC102 says what their class lacks.
            if name is not None or path.stem.endswith("_env") or defines_env_class(path):
                found.append((path, name))
        else:
            subject, base = (
                ("path", f"the current folder, {Path.cwd()}")
                if cli
                else ("--hermes-conformance target", "where you run pytest")
            )
            raise ConfigError(
                f"{subject} {target!r} should be an env file or a folder; it does "
                f"not exist. Fix: check the path (relative to {base})."
            )
    return found


def refuse_report_over_input(report: str | Path, targets: list[str]) -> None:
    """Raise ConfigError when the report would overwrite one of the run's inputs: a named file, or a ``.py`` file
    (``--report my_env.py`` overwrote the env's source with the report)."""
    where = Path(report).resolve()
    named = {split_target(t)[0].resolve() for t in targets}
    if where in named or where.suffix == ".py":
        raise ConfigError(
            f"the report path {str(report)!r} should not be one of the files checked or a .py file: writing "
            "the report there would overwrite it. Fix: name a new file, e.g. conformance-report.md or "
            "conformance-report.json."
        )


def parse_overrides(pairs: list[str] | None) -> dict[str, Any]:
    """``["control_ceiling=0.3", "slow=true"]`` (the CLI's ``--hermes-set`` / ``--set``) -> typed settings."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, eq, raw = pair.partition("=")
        if not eq or not key.strip():
            raise ConfigError(
                f"a setting override should look like KEY=VALUE (e.g. control_ceiling=0.3); got {pair!r}."
            )
        try:
            out[key.strip()] = yaml.safe_load(raw)
        except yaml.YAMLError:
            out[key.strip()] = raw
    return out


def load_settings(start: Path | None = None, **overrides: Any) -> Settings:
    """Settings from the nearest pyproject.toml's ``[tool.hermes-conformance]``, then ``overrides`` (CLI wins)."""
    data: dict[str, Any] = {}
    here = (start or Path.cwd()).resolve()
    pyproject_found = False
    pyproject = here / "pyproject.toml"
    for folder in (here, *here.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            pyproject_found = True
            try:
                doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(
                    f"{pyproject} should be valid TOML; {exc}. Fix: correct the file."
                ) from None
            data = dict(doc.get("tool", {}).get("hermes-conformance", {}))
            break
    if "forced" in data:
        raise ConfigError(
            "[tool.hermes-conformance] should not set `forced`; it holds the ids named on the "
            "command line. Fix: use `select`."
        )
    if isinstance(data.get("env"), dict) and overrides.get("env"):
        overrides = {**overrides, "env": {**data["env"], **overrides["env"]}}  # field by field, the CLI wins
    data.update({k: v for k, v in overrides.items() if v is not None})
    if overrides.get("select"):
        data["forced"] = list(overrides["select"])
    known = set(Settings.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"conformance settings ([tool.hermes-conformance] or --hermes-set/--set) should be among "
            f"{sorted(known - {'forced'})}; got {unknown}. Fix: remove or rename those keys."
        )
    _resolve_env_inputs(data, (pyproject.parent if pyproject_found else here), overrides)
    for key in ("select", "ignore"):
        ids = data.get(key) or []
        bad = [i for i in ids if not any(c.id.startswith(i) for c in all_checks())]
        if bad:
            where = (
                f"the command line's {key} (--{key} / --hermes-{key})"
                if overrides.get(key)
                else f"[tool.hermes-conformance] {key}"
            )
            raise ConfigError(
                f"{where} should name check ids (e.g. HC401) or prefixes "
                f"(e.g. HC4); got {bad}. Fix: see docs/checks.md for the ids."
            )
    return Settings(**data)


def _resolve_env_inputs(data: dict[str, Any], base: Path, overrides: dict[str, Any]) -> None:
    """Check and resolve ``env`` / ``config`` / ``items`` in place: paths from pyproject are relative to it, paths
    from the command line to the current folder; the ``env:`` section of ``config`` goes under ``env`` (the
    explicit ``env`` wins, as ``process`` lets --env.* win over --config)."""
    import yaml

    for key in ("config", "items"):
        value = data.get(key)
        if value is None:
            continue
        where = Path.cwd() if overrides.get(key) is not None else base
        path = (where / str(value)).resolve()
        if not path.is_file():
            raise ConfigError(
                f"the conformance setting {key} should name a file; got {str(value)!r}, which does not exist "
                f"(relative to {where}). Fix: check the path."
            )
        data[key] = str(path)
    env = data.get("env") or {}
    if not isinstance(env, dict):
        raise ConfigError(
            f"the conformance setting env should be a table of env config fields; got {type(env).__name__}. "
            'Fix: write `env = { dataset_name = "data/train.jsonl" }` or pass --env.dataset_name data/train.jsonl.'
        )
    if data.get("config"):
        try:
            loaded = yaml.safe_load(Path(data["config"]).read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(
                f"{data['config']} should be valid YAML; {exc}. Fix: correct the file."
            ) from None
        section = loaded.get("env", {}) if isinstance(loaded, dict) else None
        if not isinstance(section, dict):
            raise ConfigError(
                f"{data['config']} should be a `process --config` file (a mapping with an `env:` section); got "
                f"{type(loaded if section is None else section).__name__}. Fix: put the env fields under `env:`."
            )
        env = {**section, **env}
    data["env"] = dict(env)
    if data.get("items"):
        from hermes_envs.conformance._standins import read_items_file

        read_items_file(Path(data["items"]))  # a malformed file is a usage error now, not a finding later


def parse_env_options(argv: list[str]) -> tuple[list[str], dict[str, Any]]:
    """Take ``--env.KEY VALUE`` / ``--env.KEY=VALUE`` out of ``argv`` (as atroposlib's ``process`` takes them);
    return the other arguments and the env fields, values read as YAML scalars (``3`` an int, ``true`` a bool)."""
    import yaml

    rest: list[str] = []
    env: dict[str, Any] = {}
    index = 0
    while index < len(argv):
        token = argv[index]
        if not token.startswith("--env."):
            rest.append(token)
            index += 1
            continue
        key, eq, raw = token[len("--env.") :].partition("=")
        if not eq:
            if index + 1 >= len(argv):
                raise ConfigError(f"{token} should be followed by a value; got none. Fix: {token} VALUE.")
            raw = argv[index + 1]
            index += 1
        index += 1
        if not key:
            raise ConfigError(f"an env option should look like --env.FIELD VALUE; got {token!r}.")
        try:
            env[key] = yaml.safe_load(raw)
        except yaml.YAMLError:
            env[key] = raw
    return rest, env


@dataclass
class EnvReport:
    """The outcomes of every check on one env class."""

    label: str
    outcomes: list[Outcome]
    seconds: float = 0.0
    #: Wall time per phase (import, construct, setup, items, evaluate, probes, rewards, gold, trajectories, ...).
    timings: dict[str, float] = field(default_factory=dict)
    #: The env file and class (what ``hermes-envs replay`` reruns a counterexample against).
    path: str = ""
    class_name: str = ""

    @property
    def failed(self) -> bool:
        return any(o.failed for o in self.outcomes)


@dataclass
class ConformanceReport:
    """The outcomes for every env in a run, with text / Markdown / JSON renderings."""

    envs: list[EnvReport] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(e.failed for e in self.envs)

    def to_text(self) -> str:
        lines = []
        for env in self.envs:
            lines.append(f"{env.label}  ({env.seconds:.1f} s)")
            if env.timings:
                lines.append("  time: " + ", ".join(f"{k} {v:.2f} s" for k, v in env.timings.items()))
            for o in env.outcomes:
                title = CHECKS[o.check_id].title if o.check_id in CHECKS else ""
                lines.append(
                    f"  {o.status.value.upper():<14} {o.check_id} {title}"
                    + (f" — {o.note}" if o.note else "")
                )
                for f in o.findings:
                    lines.extend("      " + line for line in f.render().splitlines())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "failed": self.failed,
            "envs": [
                {
                    "env": e.label,
                    "seconds": round(e.seconds, 3),
                    "timings": {k: round(v, 3) for k, v in e.timings.items()},
                    "checks": [
                        {
                            "id": o.check_id,
                            "title": CHECKS[o.check_id].title if o.check_id in CHECKS else "",
                            "status": o.status.value,
                            "note": o.note,
                            "findings": [
                                {
                                    "id": f.check_id,
                                    "severity": f.severity.value,
                                    "subject": f.subject,
                                    "message": f.message,
                                    "fix": f.fix,
                                }
                                for f in o.findings
                            ],
                        }
                        for o in e.outcomes
                    ],
                }
                for e in self.envs
            ],
        }

    def to_markdown(self) -> str:
        out = ["# hermes-envs conformance report", ""]
        for env in self.envs:
            out += [f"## {env.label}", "", "| check | status | finding |", "|---|---|---|"]
            for o in env.outcomes:
                text = (
                    "<br>".join(
                        f"{f.message} **Fix:** {f.fix}".replace("|", "\\|").replace("\n", " ")
                        for f in o.findings
                    )
                    or o.note
                )
                out.append(
                    f"| {o.check_id} {CHECKS[o.check_id].title if o.check_id in CHECKS else ''} "
                    f"| {o.status.value} | {text} |"
                )
            out.append("")
        return "\n".join(out)

    def write(self, path: str | Path) -> None:
        """Write the report as JSON (``.json``) or Markdown (anything else)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".json":
            path.write_text(json.dumps(self.to_dict(), indent=2), encoding="utf-8")
        else:
            path.write_text(self.to_markdown(), encoding="utf-8")


def env_sessions(path: Path, class_name: str | None, settings: Settings) -> list[EnvSession]:
    """The sessions of one target, as ``--hermes-conformance`` collects them: the named class, else one per env
    class of the file (one session when the file does not import or defines none: its HC101/HC102 say why)."""
    probe = EnvSession(path, class_name, settings)
    if class_name:
        return [probe]
    from hermes_envs.env import find_env_classes
    from hermes_envs.errors import EnvLoadError

    try:
        probe.load()
    except EnvLoadError:
        return [probe]
    names = [c.__name__ for c in find_env_classes(probe.module)]
    return [probe if n == probe.class_name else EnvSession(path, n, settings) for n in names]


def run_conformance(
    targets: list[str], settings: Settings | None = None, *, cli: bool = False
) -> ConformanceReport:
    """Run every selected check on every env class found in ``targets`` (every class of a file, as the pytest
    plugin does); findings are collected, never short-circuited."""
    settings = settings or load_settings()
    report = ConformanceReport()
    for path, wanted in discover(targets, cli=cli):
        if settings.contain:
            report.envs.extend(_contained_reports(path, wanted, settings))
            continue
        for session in env_sessions(path, wanted, settings):
            start = time.perf_counter()
            with session:
                outcomes = session.run_all()
                report.envs.append(
                    EnvReport(
                        session.label,
                        outcomes,
                        time.perf_counter() - start,
                        dict(session.timings),
                        path=str(session.path),
                        class_name=session.class_name or "",
                    )
                )
    return report


def _contained_reports(path: Path, wanted: str | None, settings: Settings) -> list[EnvReport]:
    """Every env class of one target, each run in its own container (the first also names the file's classes)."""
    from hermes_envs.conformance._contained import run_env_contained

    first = run_env_contained(path.resolve(), wanted, settings)
    runs = [first]
    if wanted is None and first.names:
        runs += [run_env_contained(path.resolve(), name, settings) for name in first.names[1:]]
    return [
        EnvReport(
            r.label,
            r.outcomes,
            r.seconds,
            dict(r.timings),
            path=str(path.resolve()),
            class_name=r.label.split("::", 1)[1] if "::" in r.label else (wanted or ""),
        )
        for r in runs
    ]


__all__ = [
    "ConformanceReport",
    "EnvReport",
    "Status",
    "discover",
    "env_sessions",
    "load_settings",
    "parse_env_options",
    "parse_overrides",
    "refuse_report_over_input",
    "run_conformance",
    "split_target",
]
