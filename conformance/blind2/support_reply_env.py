"""Customer-support reply (single turn, no gold answer), written on atroposlib's BaseEnv directly.

Each item is a customer message; the policy writes one reply. There is no reference reply: the score is a rubric
checked in code, a quarter each for acknowledging the problem, handling the order number (quote it when given,
ask for it when missing), a length of 20 to 150 words, and making no promise the agent cannot keep (refunds,
guarantees, dates). A reply that never mentions the customer's problem scores 0, so a generic template cannot
collect the points. A reply cut off by the token limit (finish_reason 'length') scores 0: half a reply is not a
reply, and training on it would teach rambling. Groups are sampled with n=group_size in one request.
"""

from __future__ import annotations

import random
import re
import time

from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig, ScoredDataGroup

SYSTEM_PROMPT = (
    "You are a customer-support agent for an online shop. Reply to the customer in a friendly, concise way. Never "
    "promise refunds, replacements or delivery dates yourself: a specialist confirms those."
)
_ACK = re.compile(r"\b(sorry|apologi[sz]e|understand|thank(s| you) for)\b", re.IGNORECASE)
_ASK_ORDER = re.compile(r"order (number|id|#)", re.IGNORECASE)
_PROMISE = re.compile(
    r"\b(guarantee\w*|we will refund|you will (get|receive) a (full )?refund|refund (is|has been) (issued|approved)|"
    r"will arrive (by|on|tomorrow)|100 ?%)",
    re.IGNORECASE,
)

# (the customer's problem, words a reply that addresses it would use)
ISSUES = [
    ("my parcel still hasn't arrived after two weeks", ["parcel", "package", "deliver", "arriv", "shipment"]),
    ("the blender I received is cracked", ["blender", "crack", "damage"]),
    ("I was charged twice for the same purchase", ["charge", "twice", "double", "payment"]),
    ("the shoes are the wrong size and I want to exchange them", ["shoe", "size", "exchange"]),
    ("the tracking page has said 'label created' for ten days", ["tracking", "label", "shipment", "deliver"]),
    ("one item was missing from my box", ["missing", "box"]),
    ("the jacket's zipper broke on the first day", ["jacket", "zipper", "broke", "broken"]),
    ("I cancelled my order but still got billed", ["cancel", "bill", "charge"]),
]
OPENERS = [
    "Hi,",
    "Hello there.",
    "This is really frustrating.",
    "Good morning,",
    "Hey,",
    "I'm quite annoyed:",
]


def _make_items(seed: int = 23) -> list[dict]:
    """Built-in dataset: issues x openers x with/without an order number."""
    rng = random.Random(seed)
    items = []
    for issue, keywords in ISSUES:
        for opener in OPENERS:
            order = f"#{rng.randint(100000, 999999)}" if rng.random() < 0.5 else None
            text = f"{opener} {issue}." + (f" My order number is {order}." if order else "")
            items.append({"message": text, "order": order, "keywords": keywords})
    rng.shuffle(items)
    return items


def rubric_score(reply: str, item: dict) -> float:
    """Share of the four rubric points the reply meets; 0 for a reply that never mentions the problem."""
    if not any(word in reply.lower() for word in item["keywords"]):
        return 0.0
    points = 0
    points += bool(_ACK.search(reply))
    if item["order"]:
        points += item["order"] in reply
    else:
        points += bool(_ASK_ORDER.search(reply))
    points += 20 <= len(reply.split()) <= 150
    points += not _PROMISE.search(reply)
    return points / 4


class SupportReplyEnv(BaseEnv):
    """Single-turn support replies scored by a code rubric; truncated replies score 0."""

    name = "support-reply"
    env_config_cls = BaseEnvConfig

    @classmethod
    def config_init(cls) -> tuple[BaseEnvConfig, list[APIServerConfig]]:
        config = BaseEnvConfig(
            group_size=8,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=1024,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="support-reply",
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
        self._eval_items = items[:8]
        self._items = items[8:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def _messages(self, item: dict) -> list[dict]:
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": item["message"]}]

    def _tokenize(self, chat: list[dict]) -> tuple[list[int], list[int]]:
        """Tokens of the whole chat and masks that train only the reply (the prompt is -100)."""
        prompt = self.tokenizer.apply_chat_template(chat[:-1], tokenize=False, add_generation_prompt=True)
        full = self.tokenizer.apply_chat_template(chat, tokenize=False)
        prompt_ids = self.tokenizer.encode(prompt, add_special_tokens=False)
        tokens = self.tokenizer.encode(full, add_special_tokens=False)
        return tokens, [-100] * len(prompt_ids) + tokens[len(prompt_ids) :]

    def _score_choice(self, choice, item: dict) -> float:
        if choice.finish_reason == "length":
            return 0.0
        return rubric_score(choice.message.content or "", item)

    async def collect_trajectories(self, item: dict) -> tuple[ScoredDataGroup | None, list]:
        messages = self._messages(item)
        completion = await self.server.chat_completion(
            messages=messages, n=self.config.group_size, max_tokens=300, temperature=1.0
        )
        group = ScoredDataGroup(tokens=[], masks=[], scores=[], messages=[])
        for choice in completion.choices:
            chat = messages + [{"role": "assistant", "content": choice.message.content or ""}]
            tokens, masks = self._tokenize(chat)
            group["tokens"].append(tokens)
            group["masks"].append(masks)
            group["scores"].append(self._score_choice(choice, item))
            group["messages"].append(chat)
        return group, []

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for item in self._eval_items:
            completion = await self.server.chat_completion(
                messages=self._messages(item), n=1, max_tokens=300, temperature=0.0
            )
            scores.append(self._score_choice(completion.choices[0], item))
        mean = sum(scores) / max(1, len(scores))
        self._eval_metrics.append(("eval/rubric_score", mean))
        await self.evaluate_log(metrics={"eval/rubric_score": mean}, start_time=start, end_time=time.time())

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    SupportReplyEnv.cli()
