"""The public names of hermes_envs.agent and hermes_envs.compat are pinned: a removal or rename is deliberate."""

from __future__ import annotations

import hermes_envs.agent as agent
import hermes_envs.compat as compat


def test_agent_public_api() -> None:
    assert agent.__all__ == [
        "AgentResult",
        "BudgetConfig",
        "ChatServer",
        "HermesAgentLoop",
        "TerminationReason",
        "ToolError",
        "final_response",
        "tool_calls",
        "tool_results",
        "tools_used",
    ]
    assert all(hasattr(agent, name) for name in agent.__all__)


def test_compat_public_api() -> None:
    assert compat.__all__ == [
        "STAND_INS",
        "LayoutFinder",
        "StandInFinder",
        "install_layout",
        "install_standins",
        "is_stand_in",
        "package_folders",
        "uninstall_standins",
    ]
    assert set(compat.STAND_INS) == {
        "tools.terminal_tool",
        "tools.budget_config",
        "tools.registry",
        "tools.council_personas",
        "toolsets",
        "model_tools",
    }
