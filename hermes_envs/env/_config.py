"""``HermesAgentEnvConfig``: atroposlib's ``BaseEnvConfig`` plus the agent, tool and sandbox settings."""

from __future__ import annotations

from atroposlib.envs.base import BaseEnvConfig
from pydantic import Field, field_validator

from hermes_envs._json_types import JSONObject
from hermes_envs.agent.budget import (
    DEFAULT_PREVIEW_SIZE_CHARS,
    DEFAULT_RESULT_SIZE_CHARS,
    DEFAULT_TURN_BUDGET_CHARS,
    BudgetConfig,
)
from hermes_envs.agent.loop import DEFAULT_TOOL_TIMEOUT
from hermes_envs.errors import ConfigError

__all__ = ["HermesAgentEnvConfig"]


class HermesAgentEnvConfig(BaseEnvConfig):  # type: ignore[misc]  # atroposlib ships no py.typed: Any base
    """Settings of a tool-calling agent environment; every field is also a ``--env.<field>`` CLI flag."""

    enabled_toolsets: list[str] | None = Field(
        default=None, description="Toolsets offered to the model; None = all."
    )
    disabled_toolsets: list[str] | None = Field(default=None, description="Toolsets never offered.")
    distribution: str | None = Field(
        default=None, description="Name of a registered toolset distribution, sampled once per group."
    )
    max_agent_turns: int = Field(
        default=30, ge=1, description="Model calls per rollout before it is cut off."
    )
    system_prompt: str | None = Field(
        default=None, description="System message placed before the user prompt."
    )
    agent_temperature: float = Field(
        default=1.0, ge=0.0, description="Sampling temperature of training rollouts."
    )
    terminal_backend: str = Field(
        default="local",
        description="Sandbox backend for tools: 'local', 'bwrap', 'container', 'docker', or an upstream name "
        "(modal, singularity, daytona, ssh, vercel_sandbox: run in the local container-style sandbox).",
    )
    terminal_env_passthrough: list[str] = Field(
        default_factory=list,
        description="Names (shell patterns) of this process's environment variables that tool commands may see, "
        "besides PATH, HOME, LANG, LC_*, TERM, TZ.",
    )
    terminal_host_paths: bool = Field(
        default=True,
        description="On the 'local' backend, the model's file tools may read and write absolute host paths "
        "outside the task's folder (as upstream's local tools do); False keeps them in the task's folder. "
        "The conformance kit always runs with False.",
    )
    tool_call_timeout: float | None = Field(
        default=DEFAULT_TOOL_TIMEOUT,
        gt=0,
        description="Seconds one tool call may run before the loop reports it as timed out (None: no bound).",
    )
    default_result_size_chars: int = Field(
        default=DEFAULT_RESULT_SIZE_CHARS,
        ge=1,
        description="A tool result longer than this (chars) is saved to the sandbox and replaced by a preview.",
    )
    turn_budget_chars: int = Field(
        default=DEFAULT_TURN_BUDGET_CHARS,
        ge=1,
        description="All tool results of one turn together; the largest are replaced first when over.",
    )
    preview_size_chars: int = Field(
        default=DEFAULT_PREVIEW_SIZE_CHARS, ge=1, description="Length of the preview of a replaced result."
    )
    tool_result_overrides: dict[str, int] | None = Field(
        default=None,
        description="Per-tool result thresholds (chars), e.g. {'terminal': 10000}; read_file is never cut.",
    )
    terminal_timeout: int = Field(default=120, ge=1, description="Default per-command timeout in seconds.")
    terminal_lifetime: int = Field(default=3600, ge=1, description="Seconds an idle task sandbox lives.")
    dataset_name: str | None = Field(
        default=None, description="Dataset to load in setup() (author's choice)."
    )
    dataset_split: str = Field(default="train", description="Split of dataset_name to load.")
    prompt_field: str = Field(default="prompt", description="Item field holding the prompt.")
    tool_pool_size: int = Field(
        default=128, ge=1, description="Threads that run tool calls off the event loop."
    )
    tool_call_parser: str = Field(
        default="hermes", description="Parser for tool calls written as text (Phase 2)."
    )
    extra_body: JSONObject | None = Field(
        default=None, description="Extra JSON sent with every model request."
    )
    raise_on_reward_error: bool = Field(
        default=False,
        description="Raise when compute_reward raises instead of scoring 0.0 (the conformance kit turns this on).",
    )

    @field_validator("tool_call_parser")
    @classmethod
    def _known_parser(cls, name: str) -> str:
        from hermes_envs.parsers import list_parsers

        if name not in list_parsers():
            raise ConfigError(
                f"tool_call_parser should be one of {', '.join(list_parsers())}; got {name!r}. "
                "Fix: pass --env.tool_call_parser with one of those names."
            )
        return name

    def build_budget_config(self) -> BudgetConfig:
        """The tool-result budget of these settings, for ``HermesAgentLoop(..., budget_config=...)``."""
        return BudgetConfig(
            default_result_size=self.default_result_size_chars,
            turn_budget=self.turn_budget_chars,
            preview_size=self.preview_size_chars,
            tool_overrides=dict(self.tool_result_overrides or {}),
        )
