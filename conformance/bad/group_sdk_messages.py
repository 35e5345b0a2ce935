"""HC207: collect_trajectory appends the SDK's ChatCompletionMessage object to the group's messages instead of a
dict, so atroposlib's json.dumps of the group fails when it is sent and the trainer never gets a group."""

from _good import RawSumEnv
from atroposlib.envs.base import ScoredDataItem

EXPECTED_FINDINGS = ["HC207", "HC507"]


class SdkMessagesEnv(RawSumEnv):
    name = "group-sdk-messages"

    async def collect_trajectory(self, item: dict) -> tuple[ScoredDataItem | None, list]:
        messages = [{"role": "user", "content": self.prompt(item)}]
        completion = await self.server.chat_completion(messages=messages, n=1, temperature=1.0, max_tokens=64)
        reply = completion.choices[0].message.content or ""
        tokens, masks = self.tokenize([*messages, {"role": "assistant", "content": reply}])
        messages.append(completion.choices[0].message)  # the mistake: the SDK object, not a dict
        return ScoredDataItem(
            tokens=tokens,
            masks=masks,
            scores=self.score(item, reply),
            messages=messages,
            advantages=None,
            ref_logprobs=None,
            group_overrides=None,
            overrides=None,
            images=None,
        ), []


if __name__ == "__main__":
    SdkMessagesEnv.cli()
