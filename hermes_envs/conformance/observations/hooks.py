"""Observations of the env's own hooks: ``setup()``, the training items of ``get_next_item``, what ``evaluate()``
sent, logged and returned, and what ``wandb_log`` hands on to atroposlib. Each is made once per session, cached.

:class:`HookObservations` is mixed into :class:`~hermes_envs.conformance.session.EnvSession`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from hermes_envs.conformance.observations.logs import captured_log as _captured_log

#: How many get_next_item calls we make at most while looking for the end of the training cycle.
MAX_ITEMS_SCANNED = 2000
#: Calls made after the same item came back twice in a row, before calling get_next_item stuck (HC203).
STUCK_CALLS = 8
#: The metric the wandb_log spy passes in, to see whether an override hands it on to the base class.
PROBE_METRIC = "hermes_conformance/probe"
#: What the fake model answers in evaluate() after calling the tools: a judge's prompt quotes it.
EVAL_ANSWER = "I don't know."


def _item_key(item: Any) -> str:
    try:
        return json.dumps(item, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(item)


class HookObservations:
    """Cached observations of setup / get_next_item / evaluate / wandb_log, on the session they are mixed into."""

    facts: dict[str, Any]
    settings: Any

    def setup_done(self) -> float:
        """Run ``setup()`` once; returns the seconds it took (raises what setup raised)."""
        if "setup_seconds" not in self.facts:
            start = time.perf_counter()
            try:
                # its warnings are kept: a check that finds no data can then name what setup() said (HC202)
                with _captured_log() as self.facts["setup_log"]:
                    self.run_env(lambda env: env.setup(), timeout=self.settings.setup_timeout, phase="setup")
            except (asyncio.TimeoutError, TimeoutError):
                raise TimeoutError(
                    f"setup() did not finish within {self.settings.setup_timeout:g} s (setup_timeout)"
                ) from None
            self.facts["setup_seconds"] = time.perf_counter() - start
        return self.facts["setup_seconds"]

    def training_items(self) -> dict[str, Any]:
        """Call ``get_next_item`` until the first item comes back (a full cycle) or a cap; cached.

        Returns ``{"items": [...], "cycled": bool, "error": str | None, "calls": int}``.
        """
        if "training" in self.facts:
            return self.facts["training"]
        self.setup_done()
        items: list[Any] = []
        keys: list[str] = []
        error = None
        cycled = False
        stuck = False
        stuck_checked: list[bool] = []

        async def scan(env: Any) -> None:
            nonlocal error, cycled, stuck
            for _ in range(MAX_ITEMS_SCANNED):
                try:
                    item = await env.get_next_item()
                except Exception as exc:
                    error = f"{type(exc).__name__}: {exc}"
                    return
                if item is None:
                    return
                key = _item_key(item)
                if keys and key == keys[0]:
                    if len(keys) == 1 and not stuck_checked:
                        # The same item twice in a row: a one-item dataset, or a get_next_item that never
                        # advances. A few more calls tell them apart (a random sampler moves on).
                        stuck_checked.append(True)
                        for _ in range(STUCK_CALLS):
                            try:
                                again = await env.get_next_item()
                            except Exception as exc:
                                error = f"{type(exc).__name__}: {exc}"
                                return
                            if _item_key(again) != key:
                                items.append(again)
                                keys.append(_item_key(again))
                                break
                        else:
                            stuck = True
                            cycled = True
                            return
                        continue
                    cycled = True
                    return
                items.append(item)
                keys.append(key)

        self.run_env(scan, phase="items")
        self.facts["training"] = {
            "items": items,
            "cycled": cycled,
            "stuck": stuck,
            "error": error,
            "calls": len(items) + cycled,
        }
        return self.facts["training"]

    def eval_observation(self) -> dict[str, Any]:
        """Run ``evaluate()`` against a fake model; record what it sent, logged and returned. Cached.

        The fake model calls every offered tool on its first turn, then answers "I don't know.", so an agent loop
        shows up as a follow-up request carrying the tool results. Returns ``{"prompts": [first user message of
        each conversation], "requests": [...], "error": str|None, "returned": Any, "logged": [metrics dicts
        given to evaluate_log], "raw_prompts": [text prompts sent to /v1/completions]}``.
        """
        if "eval" in self.facts:
            return self.facts["eval"]
        from hermes_envs.conformance.probes import call_each_tool_then

        self.setup_done()
        self.check_rollouts_possible()
        env = self.env()
        error = None
        returned = None
        logged: list[Any] = []
        original_log = getattr(env, "evaluate_log", None)
        if original_log is not None:

            async def spy_log(*args: Any, **kwargs: Any) -> Any:
                logged.append(kwargs.get("metrics", args[0] if args else None))
                return await original_log(*args, **kwargs)

            env.evaluate_log = spy_log
        from hermes_envs.conformance.sites import RaisedInAuthorCode

        escaped: BaseException | None = None
        with (
            self.sandbox_leaks() as leaked,
            self.responding(call_each_tool_then(EVAL_ANSWER)) as made,
            _captured_log() as log_records,
        ):
            try:
                with self.scratch_cwd():
                    returned = self.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate")
            except Exception as exc:
                escaped = exc
                error = f"{type(exc).__name__}: {exc}"
            finally:
                if original_log is not None:
                    del env.evaluate_log
        swallowed: list[str] = []
        if not made and escaped is None:
            # Nothing asked and nothing raised: run it once more under the exception tracer (too slow to leave
            # on for a working evaluate) to name what it caught.
            trace = RaisedInAuthorCode()
            with self.sandbox_leaks(), self.responding(call_each_tool_then(EVAL_ANSWER)), self.scratch_cwd():
                with contextlib.suppress(Exception), trace:
                    self.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate-traced")
            swallowed = [f"{type(e).__name__}: {e} (at {where})" for e, where in trace.swallowed(None)]
        prompts: list[str] = []
        raw_prompts: list[str] = []  # the text prompts of /v1/completions requests (no messages there)
        for call in made:
            users = [m.get("content") for m in call.body.get("messages") or [] if m.get("role") == "user"]
            if users and isinstance(users[0], str) and users[0] not in prompts:
                prompts.append(users[0])
            raw = call.body.get("prompt")
            for text in raw if isinstance(raw, list) else [raw]:
                if isinstance(text, str) and text not in raw_prompts:
                    raw_prompts.append(text)
        self.facts["eval"] = {
            "prompts": prompts,
            "raw_prompts": raw_prompts,
            "requests": made,
            "error": error,
            "returned": returned,
            "logged": logged,
            "leaked_sandboxes": leaked,
            # What evaluate() caught and what it logged: an empty evaluate() names its real cause (HC202).
            "swallowed": swallowed,
            "log_records": log_records,
        }
        return self.facts["eval"]

    def wandb_observation(self) -> dict[str, Any]:
        """Call ``env.wandb_log({PROBE_METRIC: 1.0})`` with a spy on atroposlib's ``BaseEnv.wandb_log``. Cached.

        Then calls it as atroposlib does, with ``{}`` and with no argument. Returns ``{"calls": [metrics dicts that
        reached BaseEnv.wandb_log], "error": str|None, "bare": {"wandb_log({})": None or what went wrong, ...}}``.
        Runs after
        ``evaluate()`` so metrics an env keeps for its next wandb_log are included.
        """
        if "wandb" in self.facts:
            return self.facts["wandb"]
        from atroposlib.envs.base import BaseEnv

        self.eval_observation()
        calls: list[dict[str, Any]] = []
        original = BaseEnv.__dict__["wandb_log"]

        async def spy(env_self: Any, wandb_metrics: dict | None = None, *args: Any, **kwargs: Any) -> Any:
            calls.append(dict(wandb_metrics or {}))
            return await original(env_self, wandb_metrics, *args, **kwargs)

        error = None
        #: How atroposlib itself calls it (base.py: `await self.wandb_log({})` and `await self.wandb_log()`) ->
        #: None when that call reached BaseEnv.wandb_log, else what happened.
        bare: dict[str, str | None] = {}
        BaseEnv.wandb_log = spy  # type: ignore[method-assign]
        try:
            self.run_env(lambda env: env.wandb_log({PROBE_METRIC: 1.0}), phase="wandb_log")
            for how, args in (("wandb_log({})", ({},)), ("wandb_log()", ())):
                before = len(calls)
                try:
                    self.run_env(lambda env, args=args: env.wandb_log(*args), phase="wandb_log")
                except Exception as exc:
                    bare[how] = f"raised {type(exc).__name__}: {exc}"
                    continue
                bare[how] = None if len(calls) > before else "never reached BaseEnv.wandb_log"
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        finally:
            BaseEnv.wandb_log = original  # type: ignore[method-assign]
        self.facts["wandb"] = {"calls": calls, "error": error, "bare": bare}
        return self.facts["wandb"]
