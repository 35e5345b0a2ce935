"""The training split as another process sees it (HC206): a fresh interpreter with another PYTHONHASHSEED builds
the env as the session does, runs setup(), scans get_next_item to the end of its cycle and writes the items and
their prompts. A split drawn with an unseeded random, a salted ``hash()`` or a set's order comes out different.

Run as ``python -m hermes_envs.conformance._splits ENV_FILE CLASS SETTINGS.json OUT.json`` (the worker side).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["ID_FIELDS", "item_id", "item_key", "other_seed", "scan_in_fresh_process"]


def other_seed() -> str:
    """A PYTHONHASHSEED different from this process's (when it has a fixed one), else 1."""
    mine = os.environ.get("PYTHONHASHSEED", "")
    return str((int(mine) % 4294967295) + 1) if mine.isdigit() else "1"


def item_key(item: Any) -> str:
    """An item as comparable text (the same rule as the training scan's)."""
    try:
        return json.dumps(item, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(item)


#: Item fields that name an item (the first one present, a str or int, is its identity).
ID_FIELDS = ("id", "item_id", "task_id", "uid", "qid", "question_id", "problem_id", "key", "name")


def item_id(item: Any) -> str | None:
    """The item's own identity (its ``id`` field or the like) as text, or None when it has none."""
    if not isinstance(item, dict):
        return None
    for name in ID_FIELDS:
        value = item.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return f"{name}={value}"
    return None


def scan_in_fresh_process(
    path: Path, class_name: str, settings: Any, folder: Path, timeout: float = 300.0
) -> dict[str, Any]:
    """The other process's training scan: ``{"keys", "ids", "prompts", "cycled", "seed"}``; raises RuntimeError with the
    end of its stderr when the worker failed."""
    folder.mkdir(parents=True, exist_ok=True)
    infile, outfile = folder / "split-settings.json", folder / "split-scan.json"
    data = dataclasses.asdict(settings)
    data["contain"] = False
    infile.write_text(json.dumps(data, default=repr), encoding="utf-8")
    seed = other_seed()
    env = dict(os.environ, PYTHONHASHSEED=seed)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hermes_envs.conformance._splits",
            str(path),
            class_name,
            str(infile),
            str(outfile),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=os.getcwd(),
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0 or not outfile.is_file():
        tail = " | ".join((done.stderr or "").strip().splitlines()[-3:])[-400:]
        raise RuntimeError(f"the worker exited {done.returncode}: {tail}")
    result: dict[str, Any] = json.loads(outfile.read_text(encoding="utf-8"))
    result["seed"] = seed
    return result


def _work(path: str, class_name: str, infile: str, outfile: str) -> None:
    """The worker: build the env, run setup(), scan the training cycle, write item keys and prompts."""
    from hermes_envs.conformance._observations.training import SetupRun, TrainingScan
    from hermes_envs.conformance._session import EnvSession
    from hermes_envs.conformance._settings import Settings
    from hermes_envs.env._prompt import format_prompt_of

    raw = json.loads(Path(infile).read_text(encoding="utf-8"))
    known = {f.name for f in dataclasses.fields(Settings)}
    settings = Settings(**{k: v for k, v in raw.items() if k in known})
    with EnvSession(path, class_name, settings) as session:
        session.observe(SetupRun)
        scan = session.observe(TrainingScan)
        prompts: list[str | None] = []
        env = session.env()
        for item in scan.items:
            try:
                prompt = format_prompt_of(env, item) if session.is_hermes_env() else None
            except Exception:
                prompt = None
            prompts.append(prompt if isinstance(prompt, str) else None)
        out = {
            "keys": [item_key(i) for i in scan.items],
            "ids": [item_id(i) for i in scan.items],
            "prompts": prompts,
            "cycled": scan.cycled and not scan.stuck,
            "error": scan.error,
        }
    Path(outfile).write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover - run in a subprocess by scan_in_fresh_process
    _work(*sys.argv[1:5])
