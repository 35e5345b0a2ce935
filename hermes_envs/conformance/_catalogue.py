"""Why each check matters for training and the usual fix, in one place (docs/checks.md is generated from it).

The "what it catches" column comes from each check function's docstring; a test keeps this table, the registry
and docs/checks.md in sync.
"""

from __future__ import annotations

__all__ = ["CATALOGUE"]

#: check id -> (why it matters for training, the usual fix)
CATALOGUE: dict[str, tuple[str, str]] = {
    "HC101": (
        "The trainer imports the env before anything else; an import that needs the network fails on every "
        "offline node and in CI.",
        "Move downloads and heavy work into setup(), with an offline fallback. The finding names the import that "
        "failed and whose it is: the env's own sibling module, a package to install, or a part of upstream's "
        "surface hermes-envs lacks (a gap of the kit, not yours). Meanwhile the checks with a static counterpart "
        "judge the source.",
    ),
    "HC102": (
        "Without a BaseEnv subclass there is nothing for atroposlib to run.",
        "Derive the env from HermesAgentBaseEnv (not from the config class). When the class exists but derives "
        "from a stand-in defined after a failed import, or sits under a flag (`if HERMES_AVAILABLE:`) that came "
        "out False, the finding names that import: make it succeed, and let a failed import raise.",
    ),
    "HC103": (
        "atroposlib awaits setup/get_next_item/compute_reward/evaluate and calls format_prompt directly; the "
        "wrong kind yields coroutine objects or TypeErrors mid-run.",
        "`async def` for the four hooks, plain `def format_prompt`.",
    ),
    "HC104": (
        "A single APIServerConfig is taken as a baseline config: --openai.base_url and the api key are "
        "silently ignored and `process` talks to localhost:9004.",
        "Return `config, [APIServerConfig(...)]` (a list).",
    ),
    "HC105": (
        "wandb runs, eval folders and process files are named after `name`; without it runs collide.",
        'Set `name = "my-env"` on the class.',
    ),
    "HC106": (
        "`python env.py serve|process|evaluate` is how the env is launched; without cli() it does nothing.",
        'End the file with `if __name__ == "__main__": MyEnv.cli()`.',
    ),
    "HC107": (
        "A key in the source ships with every copy of the env and bills its author.",
        "Read keys from the environment (os.environ) or --openai.api_key; revoke the leaked key.",
    ),
    "HC108": (
        "atroposlib calls token/health endpoints that hosted APIs do not have; the server is marked "
        "unhealthy and the run waits.",
        "server_type='openai' and health_check=False for external APIs.",
    ),
    "HC109": (
        "__init__ runs before anything else in every trainer process; if it raises with the env's own config, "
        "nothing runs, and every later symptom (setup, the parser) is the same one cause.",
        "Make __init__ succeed offline with the config from config_init(); read services lazily.",
    ),
    "HC201": (
        "setup() runs on every trainer start; if it needs the network, offline nodes and CI crash.",
        "Wrap downloads in try/except with a built-in sample (or ship the data). To judge the rest offline "
        "meanwhile, pass `--items FILE.jsonl` (stand-in items) or point the env at local data with "
        "`--env.dataset_name ...`.",
    ),
    "HC202": (
        "Without a held-out eval split, eval numbers measure memorisation; with an empty one, nothing.",
        "Split once in setup() and evaluate only on the held-out part.",
    ),
    "HC203": (
        "A long run asks for more items than the dataset has; an IndexError or None stops the worker.",
        "Index with wrap-around (`self.items[self.i % len(self.items)]`).",
    ),
    "HC204": (
        "Items are saved with groups, eval samples and wandb tables as JSON; a set or datetime crashes it.",
        "Keep items to JSON types (lists, str, int, float, dict).",
    ),
    "HC205": (
        "Every restart, test and CI job pays for setup().",
        "Cache heavy work on disk, load lazily, or raise `setup_seconds`.",
    ),
    "HC206": (
        "The trainer restarts the env (a crash, a resume, another node); a split drawn again differently trains on "
        "items an earlier run evaluated on, and two runs' eval numbers measure different items.",
        "Draw the split and every random part of an item with a fixed seed (`random.Random(0)`), a stable key "
        "(hashlib, not the salted `hash()`) or a sorted list, never the global random or a set's order.",
    ),
    "HC207": (
        "atroposlib sends every scored group to the trainer as JSON; a group holding an SDK object, a set or numpy "
        "values fails to send, and the run trains on nothing.",
        "Messages as dicts, tokens and masks as lists of int, scores as float, lists instead of sets.",
    ),
    "HC301": (
        "A prompt that is empty, not a str or still holds `{field}` trains the model on a broken task.",
        "Build the prompt with an f-string from fields every item has.",
    ),
    "HC302": (
        "A prompt that holds its own answer teaches copying; the reward is hackable by echoing.",
        "Leave answer fields out of the prompt (never f'{item}').",
    ),
    "HC401": (
        "AgentResult is a dataclass and its messages and tool calls are dicts; dict access on the result, "
        "made-up attributes (final_response, tool_calls, tools_used) or m.role / tc.function.name raise, and "
        "upstream turns that into a silent 0.0 for every rollout. getattr(result, 'final_response', '') or "
        "hasattr() of such a name never raises but always takes the fallback (a warning).",
        "Use result.messages / hermes_envs.final_response(result), m['content'], tc['function']['name'].",
    ),
    "HC402": (
        "A reward that raises scores 0.0 (logged here, silent upstream): the model is punished for the "
        "env's bug.",
        "Handle empty content, tool errors, truncation and long outputs.",
    ),
    "HC403": (
        "The trainer expects finite floats in [0, 1]; bools, None, NaN, bonuses above 1 or 0-10 / 0-100 scales "
        "break advantages.",
        "Return float(...) clamped to [0, 1]; rescale other scales first.",
    ),
    "HC404": (
        "Random or time-dependent scores turn the advantage into noise.",
        "No randomness in the reward; a judge at temperature 0.",
    ),
    "HC405": (
        "The base tokenizes result.messages after the reward; an edit changes what is trained on.",
        "Read without mutating; copy before editing.",
    ),
    "HC406": (
        "If doing nothing, refusing or echoing earns credit, the policy learns that instead of the task.",
        "Reward evidence of success only; keep the answer out of the prompt.",
    ),
    "HC407": (
        "If no answer can score above the controls, every group has equal scores and "
        "ensure_scores_are_not_same drops it: nothing is learned.",
        "Compare like with like; or ship conformance_transcripts() proving a good rollout scores higher.",
    ),
    "HC408": (
        "All rollouts share one event loop; a blocking call in a hook stalls every other rollout.",
        "await async APIs; ctx.aterminal / asyncio.to_thread for blocking work.",
    ),
    "HC409": (
        "Every judge call costs money and latency per rollout; two verdicts on one answer can disagree.",
        "Call the judge once per rollout and reuse its verdict (also in evaluate).",
    ),
    "HC410": (
        "Models write a correct answer many ways (1,234 / 5000 vs 5000.0 / paris / **42**); a reward that "
        "scores only one spelling trains formatting, not the task, and punishes correct rollouts.",
        "Normalise before comparing: strip markup, numbers as numbers with a tolerance, words case-insensitively.",
    ),
    "HC411": (
        "When the agent runs out of turns the last message is a tool result; grading messages[-1] credits a "
        "tool's output (an echo of the answer) as the model's answer, so the policy learns to echo.",
        "Grade the last assistant message with content (hermes_envs.final_response(result)).",
    ),
    "HC412": (
        "A fixed list of probes catches the mistakes someone listed; a search over transcripts built from the "
        "env's own items and tools finds the rest: credit for format words, refusals of a correct answer, crashes.",
        "Credit only the answer itself, read from the last assistant message; see the smallest counterexample.",
    ),
    "HC413": (
        "A reward is a function of the item and the answer the model gave: a score that moves with what was scored "
        "before (a verdict cache keyed on the text alone), with the item get_next_item handed out last, with the "
        "model's unspoken thoughts, or that spins on a hostile reply trains on noise or stalls the run; one that "
        "keeps full credit for a hedged answer (several candidates, a superset) or a partial list teaches the "
        "policy to hedge; one that scores another item's answer as well does not read the item.",
        "Grade one committed final answer against this item's own answer (the `item` argument), keep no state "
        "between calls, score precision as well as recall, bound parsing.",
    ),
    "HC414": (
        "A reward that counts the tool calls in the transcript pays for work that never happened: a refund the "
        "billing tool refused, a write that raised, a hold never placed. The policy learns to issue calls, not to "
        "make them succeed. Evidence: the env's best tool-using transcript keeps full credit with every tool result "
        "an error, and those failed calls with no answer still beat every control (replayable). Only part of the "
        "credit kept is a warning (a bonus for trying may be intended); a gate that also needs the right answer, or a "
        "bonus no larger than what calling every tool with made-up arguments earns, passes.",
        "Read the outcome: the sandbox through ctx, the env's own per-task state, or each call's tool result "
        "(skip errors); never count calls in result.messages as work done.",
    ),
    "HC501": (
        "atroposlib needs group_size aligned tokens/masks/scores; misalignment crashes or corrupts batches.",
        "Build masks from the same tokenization as tokens.",
    ),
    "HC502": (
        "Unmasked prompts train the model to write prompts; fully masked rollouts teach nothing; missing "
        "tool messages hide what the model saw.",
        "Mask prompt/tool tokens with -100; keep result.messages.",
    ),
    "HC503": (
        "The first real `process` run is where CLI wiring, config overrides and group writing meet.",
        "Run `python env.py process` against `hermes-envs fake-server` and fix what breaks.",
    ),
    "HC504": (
        "atroposlib drops a group whose scores are all equal (ensure_scores_are_not_same): with group_size 1 "
        "every group is dropped and the run trains on nothing.",
        "group_size >= 2 (or ensure_scores_are_not_same=False for single rollouts).",
    ),
    "HC505": (
        "A failed model request has no answer; a group scored from placeholder completions trains the policy on an "
        "outage and no metric shows it happened.",
        "Let the error propagate, or return None for the rollout and the group (HermesAgentBaseEnv drops a "
        "rollout whose termination is 'api_error').",
    ),
    "HC506": (
        "A reward that invents a score when its judge fails (0.5 'neutral', every rubric point met) pays every "
        "rollout during an outage, refusals included: the policy trains on noise and nothing counts the failures.",
        "Let the judge's error propagate (the rollout is dropped and counted) or fall back only to checks the "
        "reward makes itself; never return a fixed score or assume rubric points met when the judge call failed.",
    ),
    "HC507": (
        "A completion that hit max_tokens is unfinished; scored like a finished one, the policy learns that running "
        "into the limit costs nothing, and half-written answers are trained on as if complete.",
        "Read choice.finish_reason and score a 'length' completion 0 (or drop it); pass it to tokenize_for_trainer.",
    ),
    "HC601": (
        "Rollouts of different items run concurrently; state on self makes them score against each "
        "other's answers.",
        "Read everything from the `item` argument; keep no per-rollout state on self.",
    ),
    "HC602": (
        "Concurrent rollouts share the working directory and /tmp; reading there credits (or blames) a "
        "rollout for another one's files.",
        "Go through ctx (read_file, terminal): the rollout's own sandbox.",
    ),
    "HC603": (
        "Leftover sandboxes fill the disk and keep processes running for the whole run; a reused task id would be "
        "credited for old files.",
        "Create each ToolContext in try/finally and call ctx.cleanup() in the finally block.",
    ),
    "HC604": (
        "Under upstream's local backend concurrent rollouts share the host's filesystem: one absolute path for "
        "every task (/tmp/answer.txt) grades each rollout on whichever wrote last.",
        "Relative paths in the task's working directory (or the task id in the path); containers isolate.",
    ),
    "HC701": (
        "Eval without tools (or single-turn) measures a different task from training.",
        "Run HermesAgentLoop with the resolved tools in evaluate().",
    ),
    "HC702": (
        "Sampled evals are noisy and not comparable between checkpoints. A warning: a benchmark may sample on "
        "purpose (pass@1 over samples), which only the author can confirm.",
        "temperature=0.0 in evaluate().",
    ),
    "HC703": (
        "An eval nobody can see costs compute and informs nothing.",
        "await self.evaluate_log(metrics=...) (or return / keep them for wandb_log).",
    ),
    "HC704": (
        "Without super(), the base's metrics (tool errors, lengths, rollout tables) and yours are dropped.",
        "End the override with `await super().wandb_log(wandb_metrics)`.",
    ),
    "HC705": (
        "Eval scores mixed into train/* curves hide how training is really going (eval runs at temperature 0 on "
        "held-out items).",
        "Log eval results as eval/* (evaluate_log); keep train/* buffers for training rollouts only.",
    ),
    "HC706": (
        "A judge asked again in evaluate() after the reward already judged doubles the cost of every eval, and "
        "its second verdict can disagree with the score.",
        "Reuse the reward's verdict in evaluate() instead of asking the judge again.",
    ),
    "HC707": (
        "The trainer calls evaluate() every steps_per_eval: one that consumes its items or breaks its own state "
        "measures nothing after the first eval.",
        "Iterate over the eval items without consuming them; reset per-eval state at the start of evaluate().",
    ),
    "HC708": (
        "An outage during eval that is scored like wrong answers (or dropped from the mean without a count) reads "
        "as a policy that got worse, or as a mean over fewer items nobody knows is smaller.",
        "Count failed eval rollouts (result.termination == 'api_error') in the metrics, e.g. eval/api_errors, or "
        "let the error propagate; HermesAgentBaseEnv.evaluate_log adds the count for rollouts run through it.",
    ),
    "HC709": (
        "An eval that offers other tools than training, leaves out the system prompt or rewords the item's prompt "
        "measures a task the policy was not trained on: its accuracy says nothing about training progress.",
        "Build eval rollouts as training does: `self.initial_messages(item)` and the tools of "
        "`self._resolve_tools_for_group()`.",
    ),
    "HC710": (
        "A prompt that changes between calls makes one item a different task in every rollout of a group and "
        "in every eval, so its scores are not comparable.",
        "Seed prompt randomness from the item, or draw it once in setup(); silence HC710 if it is a deliberate "
        "augmentation.",
    ),
    "HC711": (
        "The trainer compares evals across steps; evals over different items mix the items' difficulty into what "
        "looks like the policy's progress.",
        "Evaluate the whole split, or a subset fixed once in setup() with a seeded random.",
    ),
    "HC712": (
        "An eval that cuts replies or tool use off earlier than training (a smaller max_tokens, a turn limit of "
        "one) scores the trained policy on answers it was never allowed to finish: eval under-reports it.",
        "Use training's budgets in evaluate(): the same max_tokens and `max_turns=self.config.max_agent_turns`; "
        "differ in temperature only.",
    ),
    "HC801": (
        "An unknown parser crashes rollouts; one that cannot round-trip the env's tools loses tool calls "
        "in Phase 2 (vLLM/SGLang).",
        "Set tool_call_parser to your model's format (hermes, qwen, ...).",
    ),
    "HC802": (
        "The tool schemas go to the model server with every request; an invalid one is refused by the server or "
        "misread by the model, and a toolset that cannot be resolved stops every rollout.",
        "Object parameters with JSON Schema type names and required names that exist; enable known toolsets.",
    ),
    "HC901": (
        "Secrets in an env repo leak with it (and with its cassettes).",
        "Read secrets from the environment; scrub cassettes; revoke what leaked.",
    ),
    "HC902": (
        "Offline nodes crash; an external judge leaks rollouts and bills a model the user did not choose.",
        "Send model calls through self.server; fall back when a download fails.",
    ),
    "HC903": (
        "A gate runs a pull request's code on the machine it runs on: an env that writes into the checkout (or the "
        "trainer's working directory, shared by every rollout and run), "
        "leaves processes running or kills its own process group breaks the trainer's node and every later run.",
        "Write through the rollout's sandbox or tempfile; run commands with ctx.terminal; wait for what you start.",
    ),
    "HC904": (
        "The model's reply is untrusted code: run in the trainer's working directory it writes and deletes files "
        "in the user's checkout; run with the trainer's environment it reads API keys and can print them into the "
        "training data; run in temporary folders never removed it fills the disk, one folder per completion. "
        "Evidence: the kit answers with a python block that records its cwd and whether it sees a secret the kit "
        "planted (errors: what any model's code could do); a folder left behind is a warning.",
        "Run it with cwd= a fresh tempfile folder removed afterwards, a minimal env= ({'PATH': ...}) and python -I, "
        "or in a sandbox.",
    ),
    "HC905": (
        "A tool's arguments are written by the model: a custom tool that evaluates them (eval in a calculator) or "
        "runs them in a shell that inherits the trainer's environment lets any rollout read the trainer's API keys "
        "into its transcript, and so into the training data. Evidence: the kit plants a secret in the environment, "
        "calls each of the env's own tools with a Python expression and a shell substitution that would read it, "
        "and finds its value in the tool's result (the built-in tools' sandbox never passes such variables on).",
        "Parse the arguments instead of evaluating them (ast.literal_eval, a small expression parser); run commands "
        "without a shell, with a minimal env= ({'PATH': ...}), or in the rollout's sandbox (ToolContext.terminal).",
    ),
}
