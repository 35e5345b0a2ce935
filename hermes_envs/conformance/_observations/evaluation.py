"""What ``evaluate()`` does against a fake model that calls every offered tool, then answers :data:`EVAL_ANSWER`:
the requests it sent, what it logged and returned, the sandboxes it left and, when it asked nothing, what it
caught."""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._findings import Skip
from hermes_envs.conformance._observations.logs import captured_log
from hermes_envs.conformance._observations.rollouts import check_rollouts_possible
from hermes_envs.conformance._observations.training import SetupRun, _item_key
from hermes_envs.conformance._session import EnvSession

#: What the fake model answers in evaluate() after calling the tools: a judge's prompt quotes it.
EVAL_ANSWER = "I don't know."


@dataclass(frozen=True)
class EvalObservation:
    """``evaluate()`` run once against the fake model (an agent loop shows up as a follow-up request carrying the
    tool results).

    ``prompts``: the first user message of each conversation; ``raw_prompts``: text prompts sent to
    /v1/completions; ``logged``: the metrics given to evaluate_log; ``swallowed`` / ``log_records``: what an
    evaluate() that asked nothing caught and logged (HC202 names the real cause from them)."""

    prompts: tuple[str, ...]
    raw_prompts: tuple[str, ...]
    requests: tuple[Any, ...]
    error: str | None
    returned: Any
    logged: tuple[Any, ...]
    leaked_sandboxes: tuple[str, ...]
    swallowed: tuple[str, ...]
    log_records: tuple[str, ...]
    #: The items evaluate() handed to compute_reward (HC709 compares what the model was told about each of them
    #: with what a training rollout of the same item is told).
    scored_items: tuple[Any, ...] = ()
    #: format_prompt(item) of each scored item just before compute_reward ran (None when it has none).
    scored_prompts: tuple[str | None, ...] = ()
    #: (item, prompt when it was scored, prompt once evaluate() returned) for each item whose prompt the env changed
    #: (an item edited in place by compute_reward or evaluate(): the next rollout of it is asked something else).
    reprompted: tuple[tuple[Any, str, str], ...] = ()

    @classmethod
    def build(cls, s: EnvSession) -> EvalObservation:
        from hermes_envs.conformance._probes import call_each_tool_then
        from hermes_envs.conformance._sites import RaisedInAuthorCode

        try:
            s.observe(SetupRun)
        except Exception:
            if s.stand_in_note() is None:
                raise
            raise Skip(
                "needs evaluate() on the env's own eval split, which setup() did not load offline (see HC201); "
                "stand-in items do not stand in for it"
            ) from None
        check_rollouts_possible(s)
        env = s.env()
        error = None
        returned = None
        logged: list[Any] = []
        original_log = getattr(env, "evaluate_log", None)
        if original_log is not None:

            async def spy_log(*args: Any, **kwargs: Any) -> Any:
                logged.append(kwargs.get("metrics", args[0] if args else None))
                return await original_log(*args, **kwargs)

            env.evaluate_log = spy_log
        scored_items: list[Any] = []
        scored_prompts: list[str | None] = []
        scored_keys: list[str] = []
        reprompted: list[tuple[Any, str, str]] = []
        original_reward = getattr(env, "compute_reward", None)
        if callable(original_reward) and "compute_reward" not in vars(env):

            def before(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
                item = args[0] if args else kwargs.get("item")
                scored_items.append(item)
                scored_prompts.append(_prompt_of(env, item))
                scored_keys.append(_item_key(item))

            def note_item(*args: Any, **kwargs: Any) -> Any:
                before(args, kwargs)
                return original_reward(*args, **kwargs)

            async def note_item_async(*args: Any, **kwargs: Any) -> Any:
                before(args, kwargs)
                return await original_reward(*args, **kwargs)

            env.compute_reward = (
                note_item_async if inspect.iscoroutinefunction(original_reward) else note_item
            )
        escaped: BaseException | None = None
        with (
            s.sandbox_leaks() as leaked,
            s.responding(call_each_tool_then(EVAL_ANSWER)) as made,
            captured_log() as log_records,
        ):
            try:
                with s.scratch_cwd():
                    returned = s.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate")
            except Exception as exc:
                escaped = exc
                error = f"{type(exc).__name__}: {exc}"
            finally:
                if original_log is not None:
                    del env.evaluate_log
                if "compute_reward" in vars(env) and original_reward is not None:
                    del env.compute_reward
        for item, prompt, key in zip(scored_items, scored_prompts, scored_keys):
            now = _prompt_of(env, item)
            # The item itself changed too: a prompt that follows the env's own state (an eval flag) is not this.
            if prompt is not None and now is not None and now != prompt and _item_key(item) != key:
                reprompted.append((item, prompt, now))
        swallowed: list[str] = []
        if not made and escaped is None:
            # Nothing asked and nothing raised: run it once more under the exception tracer (too slow to leave
            # on for a working evaluate) to name what it caught.
            trace = RaisedInAuthorCode()
            with s.sandbox_leaks(), s.responding(call_each_tool_then(EVAL_ANSWER)), s.scratch_cwd():
                with contextlib.suppress(Exception), trace:
                    s.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate-traced")
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
        return cls(
            prompts=tuple(prompts),
            raw_prompts=tuple(raw_prompts),
            requests=tuple(made),
            error=error,
            returned=returned,
            logged=tuple(logged),
            leaked_sandboxes=tuple(leaked),
            swallowed=tuple(swallowed),
            log_records=tuple(log_records),
            scored_items=tuple(scored_items),
            scored_prompts=tuple(scored_prompts),
            reprompted=tuple(reprompted),
        )


def _prompt_of(env: Any, item: Any) -> str | None:
    """``format_prompt(item)`` when the env has one and it gives text, else None (never raises)."""
    from hermes_envs.env._prompt import format_prompt_of

    if not callable(getattr(env, "format_prompt", None)):
        return None
    try:
        prompt = format_prompt_of(env, item)
    except Exception:
        return None
    return prompt if isinstance(prompt, str) else None
