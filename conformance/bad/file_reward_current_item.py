"""HC413: a file task whose reward reads the file named by the item get_next_item returned last ("the current item",
kept on self) instead of its ``item`` argument: once the trainer has fetched the next item, a rollout that wrote the
right file is checked against another item's path and scored 0. Its good transcript uses a tool (write_file), so
the relation is proven with a replay of that transcript that scores the same when nothing happens in between."""

from _good import FileWriteEnv

from environments.agent_loop import AgentResult
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC407", "HC413"]


class FileCurrentItemEnv(FileWriteEnv):
    name = "file-reward-current-item"

    async def get_next_item(self) -> dict:
        self.current = await super().get_next_item()
        return self.current

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        return await super().compute_reward(getattr(self, "current", item), result, ctx)  # the mistake


if __name__ == "__main__":
    FileCurrentItemEnv.cli()
