"""HC602 (+HC407): the reward reads the file relative to the working directory (upstream's shared local backend)
instead of through ctx, so it never sees the rollout's sandbox and can credit another rollout's file."""

from pathlib import Path

from _good import FileWriteEnv

EXPECTED_FINDINGS = ["HC602", "HC407"]


class SharedDirEnv(FileWriteEnv):
    name = "reward-reads-cwd"

    async def compute_reward(self, item, result, ctx) -> float:
        try:
            written = Path(item["path"]).read_text()
        except OSError:
            return 0.0
        return 1.0 if written.strip() == item["content"] else 0.0


if __name__ == "__main__":
    SharedDirEnv.cli()
