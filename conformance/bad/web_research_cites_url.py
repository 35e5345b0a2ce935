"""HC406: the web-research env with a reward that credits any reply citing a URL, right or wrong."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "good"))

from web_research_env import WebResearchEnv

from hermes_envs import final_response

EXPECTED_FINDINGS = ["HC406"]


class CitesAnyUrlEnv(WebResearchEnv):
    name = "web-research-cites-url"

    async def compute_reward(self, item, result, ctx) -> float:
        return 1.0 if re.search(r"https?://\S+", final_response(result)) else 0.0


if __name__ == "__main__":
    CitesAnyUrlEnv.cli()
