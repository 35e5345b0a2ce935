"""The env config's sandbox settings reach the sandbox: upstream backend names and declared variables."""

from __future__ import annotations

from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs.env import HermesAgentBaseEnv, HermesAgentEnvConfig
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.offline import offline_tokenizer_path
from hermes_envs.tools import ToolContext, configure_sandboxes, get_sandbox, sandbox_config


class _Env(HermesAgentBaseEnv):
    name = "settings-env"

    async def setup(self) -> None:
        self.items = [{"q": "x"}]

    async def get_next_item(self) -> dict:
        return self.items[0]

    def format_prompt(self, item: dict) -> str:
        return item["q"]

    async def compute_reward(self, item: dict, result: Any, ctx: ToolContext) -> float:
        return 0.0

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        return None


def _build(**config: Any) -> HermesAgentBaseEnv:
    cfg = HermesAgentEnvConfig(
        tokenizer_name=offline_tokenizer_path(), use_wandb=False, group_size=1, **config
    )
    with FakeOpenAIServer(script=[{"content": "ok"}]) as srv:
        servers = [
            APIServerConfig(
                base_url=srv.base_url,
                api_key="x",
                model_name="fake",
                server_type="openai",
                health_check=False,
            )
        ]
        return _Env(cfg, servers, slurm=False, testing=False)


def test_an_env_configured_for_modal_runs_in_the_container_sandbox_with_its_declared_variables(monkeypatch):
    monkeypatch.setenv("MY_DATASET_DIR", "/data/set")
    monkeypatch.setenv("OTHER_SECRET_URL", "https://u:p@host")
    _build(terminal_backend="modal", terminal_env_passthrough=["MY_DATASET_*"])
    assert sandbox_config().backend == "modal"
    box = get_sandbox("t")
    assert box.workdir.name == "workspace"
    env = box.run("env")["output"]
    assert "MY_DATASET_DIR=/data/set" in env and "OTHER_SECRET_URL" not in env
    configure_sandboxes()
