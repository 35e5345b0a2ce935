"""Single-turn review rating on atroposlib's plain ``BaseEnv`` (no agent loop, no tools).

Each item is a short product review; the model answers with a star rating 1-5 in ``<rating>N</rating>``. The env
samples ``group_size`` completions in one request, scores 1.0 for the exact rating, 0.5 for one star off, 0
otherwise (and 0 for a completion cut off by the length limit), and tokenizes each conversation for the trainer.
When the model server fails the group is not produced at all (``None``), so nothing is trained on the failure.
"""

from __future__ import annotations

import random
import re
import time

from atroposlib.envs.base import BaseEnv, BaseEnvConfig, ScoredDataGroup
from atroposlib.envs.server_handling.server_manager import APIServerConfig
from atroposlib.utils.tokenize_for_trainer import tokenize_for_trainer

SYSTEM_PROMPT = "Rate the review from 1 to 5 stars. Think briefly, then answer <rating>N</rating>."
_RATING = re.compile(r"<rating>\s*([1-5])\s*</rating>")

_OPENINGS = {
    1: ["Broke after two days.", "Complete waste of money.", "Arrived damaged and support never answered."],
    2: ["Mostly disappointing.", "It works, barely.", "Not what the photos suggested."],
    3: ["It is fine for the price.", "Average, nothing special.", "Does the job with some annoyances."],
    4: ["Very good overall.", "Happy with it, one small flaw.", "Solid and well made."],
    5: ["Absolutely perfect.", "Exceeded every expectation.", "Best purchase this year."],
}
_DETAILS = [
    "The battery lasts {h} hours.",
    "Delivery took {d} days.",
    "I have used it for {w} weeks now.",
    "The manual is {adj}.",
]


def _make_items(n: int = 80, seed: int = 13) -> list[dict]:
    rng = random.Random(seed)
    items: list[dict] = []
    seen: set[str] = set()
    while len(items) < n:
        stars = rng.randint(1, 5)
        detail = rng.choice(_DETAILS).format(
            h=rng.randint(2, 30),
            d=rng.randint(1, 14),
            w=rng.randint(1, 20),
            adj=rng.choice(["short", "clear", "long"]),
        )
        review = f"{rng.choice(_OPENINGS[stars])} {detail}"
        if review in seen:  # the same review in train and eval would test memory, not rating
            continue
        seen.add(review)
        items.append({"id": f"r{len(items)}", "review": review, "stars": stars})
    return items


def rating_score(text: str, stars: int) -> float:
    found = _RATING.findall(text or "")
    if not found:
        return 0.0
    off = abs(int(found[-1]) - stars)
    return 1.0 if off == 0 else 0.5 if off == 1 else 0.0


class ReviewRatingEnv(BaseEnv):
    """Group of single-turn completions per review, scored against the star label."""

    name = "review-rating"

    @classmethod
    def config_init(cls) -> tuple[BaseEnvConfig, list[APIServerConfig]]:
        config = BaseEnvConfig(
            group_size=8,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=1024,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="review-rating",
        )
        servers = [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="NousResearch/Hermes-3-Llama-3.1-8B",
                server_type="openai",
                api_key="x",
                health_check=False,
            )
        ]
        return config, servers

    async def setup(self) -> None:
        items = _make_items()
        random.Random(1).shuffle(items)
        self._eval_items = items[:16]
        self._items = items[16:]
        self._index = 0

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def _messages(self, item: dict) -> list[dict]:
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Review: {item['review']}"},
        ]

    async def collect_trajectories(self, item: dict) -> tuple[ScoredDataGroup | None, list]:
        messages = self._messages(item)
        try:
            completion = await self.server.chat_completion(
                messages=messages, n=self.config.group_size, max_tokens=256, temperature=1.0
            )
        except Exception as exc:  # the server failed: no group, nothing trained on the failure
            print(f"[review-rating] model request failed, group skipped: {type(exc).__name__}: {exc}")
            return None, []
        group = ScoredDataGroup(tokens=[], masks=[], scores=[], messages=[])
        for choice in completion.choices:
            text = choice.message.content or ""
            truncated = choice.finish_reason == "length"
            score = 0.0 if truncated else rating_score(text, item["stars"])
            chat = [*messages, {"role": "assistant", "content": text}]
            out = tokenize_for_trainer(self.tokenizer, chat, finish_reason=choice.finish_reason or "")
            group["tokens"].append(out["tokens"])
            group["masks"].append(out["masks"])
            group["scores"].append(score)
            group["messages"].append(chat)
        if len(group["scores"]) != self.config.group_size:
            return None, []
        return group, []

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores, samples, errors = [], [], 0
        for item in self._eval_items:
            try:
                completion = await self.server.chat_completion(
                    messages=self._messages(item), n=1, max_tokens=256, temperature=0.0, split="eval"
                )
                choice = completion.choices[0]
            except (
                Exception
            ) as exc:  # a failed request says nothing about the model: count it, do not score it
                print(f"[review-rating] eval request failed for {item['id']}: {type(exc).__name__}: {exc}")
                errors += 1
                continue
            text = choice.message.content or ""
            score = 0.0 if choice.finish_reason == "length" else rating_score(text, item["stars"])
            scores.append(score)
            samples.append({"id": item["id"], "stars": item["stars"], "answer": text, "score": score})
        n = max(1, len(scores))
        await self.evaluate_log(
            metrics={
                "eval/exact": sum(s == 1.0 for s in scores) / n,
                "eval/mean_score": sum(scores) / n,
                "eval/request_errors": float(errors),
            },
            samples=samples,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_tokens": 256},
        )


if __name__ == "__main__":
    ReviewRatingEnv.cli()
