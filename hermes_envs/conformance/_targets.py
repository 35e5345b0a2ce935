"""What a conformance run is asked to do, read without importing the kit: the targets expanded into env files
(judged from source), the settings (pyproject's ``[tool.hermes-conformance]`` and the command line), ``--env.*``.

``hermes-envs check`` reads all of it before importing the session, the checks and atroposlib, so a run with no
environment to check (the pre-commit hook on a commit touching only helper modules) ends at the CLI's start-up;
the catalogue is imported here only to check the ids of ``select`` / ``ignore``. The runner and the pytest plugin
use the same functions (re-exported by :mod:`hermes_envs.conformance._runner`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hermes_envs._env_files import defines_env_class, env_files_in
from hermes_envs.conformance._registry import all_checks
from hermes_envs.conformance._settings import Settings
from hermes_envs.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "discover",
    "load_settings",
    "parse_env_options",
    "parse_overrides",
    "refuse_report_over_input",
    "split_target",
]


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
    if data.get("select") or data.get("ignore"):
        import hermes_envs.conformance.checks  # noqa: F401  (the ids to check names against: the catalogue)
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
