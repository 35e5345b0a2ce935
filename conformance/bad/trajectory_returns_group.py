"""HC501: collect_trajectory builds the whole group itself, so atroposlib's collect_trajectories nests a group in a
group (each rollout's tokens are a list of token lists)."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC501"]


class GroupPerCallEnv(LetterCountEnv):
    name = "trajectory-returns-group"

    async def collect_trajectory(self, item):
        rollouts = [await super(GroupPerCallEnv, self).collect_trajectory(item) for _ in range(2)]
        group = {
            "tokens": [scored["tokens"] for scored, _ in rollouts],
            "masks": [scored["masks"] for scored, _ in rollouts],
            "scores": [scored["scores"] for scored, _ in rollouts],
            "messages": [scored.get("messages") for scored, _ in rollouts],
        }
        return group, []


if __name__ == "__main__":
    GroupPerCallEnv.cli()
