"""HC905 — the env's own tools keep the trainer's secrets: a tool call, whatever its arguments, never returns a
value of the trainer's environment (an API key) to the model.

A tool's arguments are written by the model. A custom tool that evaluates them (``eval`` in a calculator), or hands
them to a shell that inherits the trainer's environment, lets any rollout read the trainer's API keys into its
transcript, and so into the training data. The kit plants a secret in the environment, calls each custom tool with
arguments that would read it back (a Python expression, a shell substitution), and looks for the secret's value in
what the tool returned. The built-in tools are not called: their sandbox never passes secret-shaped variables on.
"""

from __future__ import annotations

from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._observations.rollouts import probe_items, run_probe
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._secrets import KIT_CANARY_PREFIX, planted_secret
from hermes_envs.conformance._session import EnvSession
from hermes_envs.tools import cleanup_sandbox

#: The secret the kit plants while the tools run: a name shaped like a credential, a random value.
CANARY = f"{KIT_CANARY_PREFIX}TOOL_CANARY_API_KEY"
#: Arguments that read :data:`CANARY` back where a tool evaluates or shells out its input: (what, text).
PAYLOADS = (
    ("a Python expression", f"__import__('os').environ.get('{CANARY}')"),
    ("a shell substitution", f"$(printenv {CANARY})"),
)
#: At most this many custom tools are called (each costs one short rollout per payload).
MAX_TOOLS = 6


def _custom_tools(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The offered tools whose handler the env's own code defines (not hermes-envs' built-in tools), with a string
    parameter to put a payload in."""
    from hermes_envs.tools import registry

    out = []
    for schema in schemas:
        fn = schema.get("function") or schema
        # A tool the registry does not hold (the env dispatches it itself) is not the kit's to call.
        try:
            handler = registry.get(str(fn.get("name"))).handler
        except KeyError:  # (UnknownNameError is a KeyError)
            continue
        if (getattr(handler, "__module__", "") or "").startswith("hermes_envs"):
            continue
        props = (fn.get("parameters") or {}).get("properties") or {}
        if any((p or {}).get("type") == "string" and "enum" not in (p or {}) for p in props.values()):
            out.append(fn)
    return out[:MAX_TOOLS]


def _arguments(fn: dict[str, Any], payload: str) -> dict[str, Any]:
    """The payload in every free string parameter; the other required ones filled with a plain value of their type."""
    params = fn.get("parameters") or {}
    props = params.get("properties") or {}
    plain = {"integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}
    args: dict[str, Any] = {}
    for name, spec in props.items():
        spec = spec or {}
        if spec.get("type") == "string" and "enum" not in spec:
            args[name] = payload
        elif name in (params.get("required") or []):
            args[name] = spec["enum"][0] if spec.get("enum") else plain.get(str(spec.get("type")), "")
    return args


def _leak(s: EnvSession, item: Any, fn: dict[str, Any], payload: str, secret: str) -> dict[str, Any] | None:
    """The tool call whose result held ``secret``, or None."""
    call = {"name": fn["name"], "arguments": _arguments(fn, payload)}

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": "", "tool_calls": [call]}

    result, task_id = run_probe(s, item, respond, 1, "tool-secret", "tool-secrets")
    cleanup_sandbox(task_id)
    for message in result.messages:
        if message.get("role") == "tool" and secret in str(message.get("content")):
            return call
    return None


@check(
    "HC905",
    "tools-keep-secrets",
    "the env's own tools never hand the trainer's secrets to the model",
    requires=("HC201",),
    why=(
        "A tool's arguments are written by the model: a custom tool that evaluates them (eval in a calculator) or "
        "runs them in a shell that inherits the trainer's environment lets any rollout read the trainer's API keys "
        "into its transcript, and so into the training data. Evidence: the kit plants a secret in the environment, "
        "calls each of the env's own tools with a Python expression and a shell substitution that would read it, "
        "and finds its value in the tool's result (the built-in tools' sandbox never passes such variables on)."
    ),
    fix=(
        "Parse the arguments instead of evaluating them (ast.literal_eval, a small expression parser); run commands "
        "without a shell, with a minimal env= ({'PATH': ...}), or in the rollout's sandbox (ToolContext.terminal)."
    ),
)
def tools_keep_secrets(s: EnvSession) -> list[Finding]:
    """A custom tool that evaluates its arguments (``eval`` in a calculator) or runs them in a shell with the
    trainer's environment: one tool call reads the trainer's API keys into the transcript and the training data."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no agent tools (not an agent env)")
    schemas, _names = s.tools()
    tools = _custom_tools(schemas)
    if not tools:
        raise NotApplicable("the env offers no tool of its own with a free-text parameter")
    items = probe_items(s)
    if not items:
        raise Skip("no item to run a rollout on")
    with planted_secret(CANARY) as secret:
        for fn in tools:
            for what, payload in PAYLOADS:
                call = _leak(s, items[0], fn, payload, secret)
                if call is None:
                    continue
                return [
                    Finding(
                        "HC905",
                        f"a tool's result should never hold the trainer's secrets; the tool {fn['name']!r} called "
                        f"with {what} in its arguments ({call['arguments']!r}) returned the value of ${CANARY}, a "
                        "secret the kit set in the trainer's environment: any rollout can read the trainer's API "
                        "keys into its transcript, and so into the training data.",
                        "never eval/exec the model's arguments (parse them: ast.literal_eval, a small expression "
                        "parser) and run commands without a shell and with a minimal env= ({'PATH': ...}), or "
                        "through the rollout's sandbox (ToolContext.terminal).",
                        subject=f"tool {fn['name']}",
                    )
                ]
    return []
