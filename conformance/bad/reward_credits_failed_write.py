"""HC414: the reward looks for the right write_file call in the transcript instead of reading the file back from the
rollout's sandbox, so a write that failed (a read-only disk, a tool error, a path outside the sandbox) is credited
as if the file were there: the policy learns that issuing the call is the task."""

import json

from _good import FileWriteEnv

EXPECTED_FINDINGS = ["HC414"]


class CreditsFailedWriteEnv(FileWriteEnv):
    name = "reward-credits-failed-write"

    async def compute_reward(self, item, result, ctx) -> float:
        for message in result.messages:
            for call in message.get("tool_calls") or []:
                if call["function"]["name"] != "write_file":
                    continue
                args = json.loads(call["function"]["arguments"] or "{}")
                if (
                    args.get("path") == item["path"]
                    and str(args.get("content", "")).strip() == item["content"]
                ):
                    return 1.0
        return 0.0


if __name__ == "__main__":
    CreditsFailedWriteEnv.cli()
