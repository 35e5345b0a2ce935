"""Upstream-layout ``environments.host_loop``: a small local loop (planner -> tools -> auditor -> manifest).

``LocalHostLoop(planner=..., tools=...)`` asks the planner (any ``str -> str`` callable) for one step at a time:
``TOOL: <name> [arg]`` runs a tool from ``tools``, ``FINAL: <answer>`` ends the run. Each step is recorded as a
:class:`LoopStep`, checked by the auditor, and the whole run is written to a JSON manifest. The default planner
asks a local Ollama server on 127.0.0.1:11434 (as upstream does); when none answers it ends the run with an error
answer instead of hanging.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["LocalHostLoop", "LoopStep"]

_TOOL = re.compile(r"TOOL:\s*(\w+)(?:\s+(\S+))?")
_FINAL = re.compile(r"FINAL:\s*([\s\S]+)")


@dataclass
class LoopStep:
    """One recorded step: which ``role`` (planner, executor, auditor) did what ``action`` with what ``detail``."""

    turn: int
    role: str
    action: str
    detail: str
    ok: bool | None = None


class LocalHostLoop:
    """Bounded local loop; subclass and override ``planner``/``tools`` (or pass them) to specialise it."""

    SYSTEM = (
        "You are a local agent. Each turn, reply with exactly one line: `TOOL: <name> [arg]` to use a tool, "
        "or `FINAL: <answer>` when you are done."
    )
    #: Model and address the default planner asks (a local Ollama server).
    OLLAMA_MODEL = "qwen2.5-coder:3b"
    OLLAMA_URL = "http://127.0.0.1:11434/api/generate"

    def __init__(
        self,
        planner: Callable[[str], str] | None = None,
        tools: dict[str, Callable[[str | None], Any]] | None = None,
        max_steps: int = 6,
        manifest_path: str | None = None,
        name: str = "host-loop",
    ) -> None:
        self.planner = planner or self._default_planner
        self.tools = dict(tools or {})
        self.max_steps = max_steps
        self.name = name
        self.manifest_path = Path(manifest_path or Path(tempfile.gettempdir()) / f"{name}.manifest.json")
        self.history: list[dict[str, str]] = [{"role": "system", "content": self.SYSTEM}]
        self.steps: list[LoopStep] = []
        self.run_id = uuid.uuid4().hex[:12]

    def _default_planner(self, prompt: str, timeout: float = 180.0) -> str:
        body = json.dumps({"model": self.OLLAMA_MODEL, "prompt": prompt, "stream": False}).encode()
        request = urllib.request.Request(self.OLLAMA_URL, body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return str(json.loads(response.read()).get("response", "")).strip()
        except (urllib.error.URLError, OSError, ValueError) as exc:
            return f"FINAL: planner error ({type(exc).__name__}: {exc})"

    def execute(self, tool: str, arg: str | None) -> Any:
        """Run ``tool`` with ``arg``; an ``{"error": ...}`` dict for an unknown tool or one that raised."""
        if tool not in self.tools:
            return {"error": f"unknown tool '{tool}'", "available": sorted(self.tools)}
        try:
            return self.tools[tool](arg)
        except Exception as exc:  # a failing tool is a failed step, not a crashed loop
            return {"error": f"{type(exc).__name__}: {exc}"}

    def audit(self, result: Any) -> bool:
        """Healthy unless the result is a dict with an ``error`` or a false ``ok``."""
        if isinstance(result, dict):
            if result.get("error"):
                return False
            if "ok" in result:
                return bool(result["ok"])
        return True

    def run(self, task: str, auditor: Callable[[Any], bool] | None = None) -> dict[str, Any]:
        """Run up to ``max_steps`` planner turns on ``task``; ``{"answer", "steps", "run_id"}``."""
        check = auditor or self.audit
        self.history.append({"role": "user", "content": task})
        self.steps.append(LoopStep(0, "planner", "task", task))
        answer: str | None = None
        for step in range(self.max_steps):
            out = self.planner(self._prompt())
            self.history.append({"role": "assistant", "content": out})
            self.steps.append(LoopStep(step, "planner", "think", out[:200]))
            call = _TOOL.search(out)
            if call and call.group(1) in self.tools:
                result = self.execute(call.group(1), call.group(2))
                ok = check(result)
                self.steps.append(LoopStep(step, "executor", call.group(1), str(result)[:200], ok))
                text = json.dumps(result, default=str)[:400]
                self.history.append({"role": "user", "content": f"TOOL_RESULT: {text}"})
                continue
            final = _FINAL.search(out)
            if final:
                answer = final.group(1).strip()
                self.steps.append(LoopStep(step, "planner", "final", answer[:200], True))
                break
        if answer is None:
            answer = "[incomplete: step budget]"
            self.steps.append(LoopStep(self.max_steps, "auditor", "incomplete", answer))
        self._write_manifest(task, answer)
        return {"answer": answer, "steps": len(self.steps), "run_id": self.run_id}

    def _prompt(self) -> str:
        return "\n".join(f"{m['role']}: {m['content']}" for m in self.history)

    def _write_manifest(self, task: str, answer: str) -> None:
        manifest = {
            "loop": self.name,
            "run_id": self.run_id,
            "task": task,
            "answer": answer,
            "steps": [asdict(s) for s in self.steps],
            "ts": time.time(),
        }
        try:
            self.manifest_path.write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")
        except OSError:  # the manifest is a record; a read-only temp dir must not fail the run
            pass
