"""HC202: evaluate() catches an AttributeError and skips every item; the finding names the exception, not an empty split."""

from __future__ import annotations

import logging
import uuid

from _trivia import TriviaBase

from hermes_envs import ToolContext

EXPECTED_FINDINGS = ["HC202"]


class TriviaEnv(TriviaBase):
    async def evaluate(self, *args, **kwargs):
        scores = []
        for item in self._held_out:
            task = f"eval-{uuid.uuid4().hex}"
            try:
                self.rollout_server_manager.refresh()
            except AttributeError as exc:
                logging.getLogger(__name__).warning("eval skipped: %s", exc)
                continue
            result = await self.run_agent(self.initial_messages(item), task_id=task, temperature=0.0)
            ctx = ToolContext(task)
            try:
                scores.append(await self.compute_reward(item, result, ctx))
            finally:
                ctx.cleanup()
        return {"eval/mean_score": sum(scores) / max(len(scores), 1)}


if __name__ == "__main__":
    TriviaEnv.cli()
