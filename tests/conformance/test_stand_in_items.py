"""Judging past the first blocker (issue 30, part 2): an env whose data is on the Hub still gets most of its checks
offline, on stand-in items (``--items``, or its own built-in samples), and env settings are taken as ``process``
takes them (``--env.FIELD VALUE``, ``--config FILE.yaml``), from the CLI, the pytest plugin and pyproject."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_envs.cli import main
from hermes_envs.conformance import EnvSession, Settings, Status, all_checks
from hermes_envs.conformance._runner import load_settings, parse_env_options
from hermes_envs.errors import ConfigError

pytest_plugins = ["pytester"]

#: An env whose setup() loads its data from the Hub (no fallback), or from the local JSONL dataset_name names.
HUB_ENV = '''
"""Counts letters; the data comes from the Hub, or from a local JSONL that dataset_name names."""

import json
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
{extra}

class HubLettersEnv(HermesAgentBaseEnv):
    name = "hub-letters"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            group_size=4,
            dataset_name="someone/letter-counts",
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        server = APIServerConfig(
            base_url="http://localhost:8000/v1", model_name="hermes", api_key="x", server_type="openai",
            health_check=False,
        )
        return config, [server]

    async def setup(self) -> None:
        name = self.config.dataset_name
        if name.endswith(".jsonl"):
            with open(name, encoding="utf-8") as handle:
                rows = [json.loads(line) for line in handle if line.strip()]
        else:
            from datasets import load_dataset

            rows = list(load_dataset(name, split="train"))
        self.eval_items, self.train_items = rows[:2], rows[2:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"How many times does '{{item['letter']}}' occur in '{{item['word']}}'? End with 'Answer: <n>'."

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        said = [m["content"] for m in result.messages if m.get("role") == "assistant" and m.get("content")]
        numbers = re.findall(r"-?\\d+", said[-1] if said else "")
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            loop = HermesAgentLoop(
                server=self.server, tool_schemas=tools, valid_tool_names=names,
                max_turns=self.config.max_agent_turns, temperature=0.0,
            )
            result = await loop.run([{{"role": "user", "content": self.format_prompt(item)}}])
            ctx = ToolContext(loop.task_id)
            try:
                correct += await self.compute_reward(item, result, ctx) == 1.0
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={{"eval/accuracy": correct / len(self.eval_items)}}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    HubLettersEnv.cli()
'''

#: These tests are about how the options reach the env, not about the container: in this test process (after the
#: in-process sessions above) the contained worker ends "with os._exit(70) during import" on this env, while the
#: same command from a shell passes contained (an open problem of the containment work, reported). Uncontained,
#: the option plumbing is what is tested.
UNCONTAINED = ("--set", "contain=false")

WORDS = ["strawberry", "banana", "bookkeeper", "mississippi", "committee", "parallel", "balloon", "coffee"]


def _rows() -> list[dict]:
    rows = []
    for word in WORDS:
        letter = max(sorted(set(word)), key=word.count)
        rows.append({"word": word, "letter": letter, "answer": str(word.count(letter))})
    return rows


@pytest.fixture
def hub(tmp_path: Path) -> tuple[Path, Path]:
    """(the Hub env file, a JSONL of items for it) in tmp_path."""
    env = tmp_path / "hub_env.py"
    env.write_text(HUB_ENV.format(extra=""), encoding="utf-8")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    return env, items


@pytest.mark.slow
def test_a_hub_dataset_env_offline_gets_most_checks_on_items_from_a_file(hub: tuple[Path, Path]) -> None:
    env, items = hub
    with EnvSession(env, settings=Settings(items=str(items))) as session:
        outcomes = {o.check_id: o for o in session.run_all()}
    ran = [o for o in outcomes.values() if o.status is not Status.SKIPPED]
    assert len(ran) >= 0.6 * len(outcomes), sorted(o.check_id for o in outcomes.values() if o not in ran)
    (setup,) = outcomes["HC201"].findings
    assert "load_dataset" not in setup.message or "Hub" in setup.message
    assert "stand-in items from items.jsonl" in setup.fix
    for check_id in ("HC301", "HC401", "HC403", "HC501", "HC502", "HC601"):
        outcome = outcomes[check_id]
        assert outcome.status is Status.PASSED, (check_id, outcome.note, outcome.findings)
        assert "judged on stand-in items from items.jsonl (--items, 8 items)" in outcome.note
        assert "see HC201" in outcome.note
    for check_id in (
        "HC202",
        "HC203",
        "HC204",
        "HC205",
        "HC701",
    ):  # the env's own data / eval split: not judged
        assert outcomes[check_id].status is Status.SKIPPED, check_id
        assert outcomes[check_id].note == "needs HC201, which did not pass"


def test_without_stand_ins_the_setup_finding_says_how_to_get_them(hub: tuple[Path, Path]) -> None:
    env, _items = hub
    with EnvSession(env, settings=Settings(select=["HC201", "HC401"])) as session:
        setup, reward = session.run("HC201"), session.run("HC401")
    assert "--items FILE.jsonl" in setup.findings[0].fix and "--env.dataset_name" in setup.findings[0].fix
    assert "with the keys the env reads: letter, word, answer" in setup.findings[0].fix
    assert reward.status is Status.SKIPPED and reward.note == "needs HC201, which did not pass"


def test_the_envs_own_builtin_samples_stand_in_and_a_finding_on_them_says_so(tmp_path: Path) -> None:
    env = tmp_path / "samples_env.py"
    samples = "\nFALLBACK_SAMPLES = " + repr(_rows()[:4]) + "\n"
    # A reward that indexes AgentResult like a dict: found on the stand-in items, and saying so.
    source = HUB_ENV.format(extra=samples).replace(
        'said = [m["content"] for m in result.messages', 'said = [m["content"] for m in result["messages"]'
    )
    env.write_text(source, encoding="utf-8")
    with EnvSession(env, settings=Settings(select=["HC201", "HC301", "HC401"])) as session:
        prompt, reward = session.run("HC301"), session.run("HC401")
    assert prompt.status is Status.PASSED
    assert "the env's own built-in samples (FALLBACK_SAMPLES, 4 items)" in prompt.note
    assert reward.status is Status.FAILED
    assert all(
        "judged on stand-in items from the env's own built-in samples" in f.message for f in reward.findings
    )


def test_env_settings_reach_the_env_as_process_gives_them(hub: tuple[Path, Path]) -> None:
    env, items = hub
    with EnvSession(env, settings=Settings(select=["HC2"], env={"dataset_name": str(items)})) as session:
        outcomes = session.run_all()
    thorough = {c.id for c in all_checks() if c.thorough}  # skipped without --thorough
    assert all(
        o.status is Status.PASSED or (o.status is Status.SKIPPED and o.check_id in thorough) for o in outcomes
    ), [(o.check_id, o.status, o.findings) for o in outcomes]


def test_an_unknown_env_field_is_named_as_the_runs_setting_not_the_envs(
    hub: tuple[Path, Path], capsys
) -> None:
    env, _items = hub
    code = main(["check", str(env), "--select", "HC109", "--env.dataset_nme", "x.jsonl", *UNCONTAINED])
    assert code == 1
    out = capsys.readouterr().out
    assert (
        "the run's env settings were rejected: --env.dataset_nme (a setting of this run, not of the env)"
        in out
    )
    assert "dataset_name" in out and "correct the name on the command line" in out


def test_env_options_are_read_as_process_reads_them() -> None:
    rest, env = parse_env_options(
        [
            "check",
            "e.py",
            "--env.dataset_name",
            "d.jsonl",
            "--env.group_size=3",
            "--select",
            "HC2",
            "--env.x",
            "true",
        ]
    )
    assert rest == ["check", "e.py", "--select", "HC2"]
    assert env == {"dataset_name": "d.jsonl", "group_size": 3, "x": True}
    with pytest.raises(ConfigError, match="followed by a value"):
        parse_env_options(["check", "e.py", "--env.dataset_name"])


def test_config_file_env_section_then_pyproject_then_command_line(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "run.yaml").write_text(
        "env:\n  dataset_name: from-yaml\n  group_size: 3\nopenai:\n  model_name: m\n"
    )
    (tmp_path / "items.jsonl").write_text('{"q": 1}\n')
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hermes-conformance]\nconfig = "run.yaml"\nitems = "items.jsonl"\nenv = { max_agent_turns = 2 }\n'
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)
    settings = load_settings(tmp_path)
    # paths in pyproject are relative to it; the yaml's env section fills env, pyproject's env wins over it
    assert settings.items == str(tmp_path / "items.jsonl") and settings.config == str(tmp_path / "run.yaml")
    assert settings.env == {"dataset_name": "from-yaml", "group_size": 3, "max_agent_turns": 2}
    settings = load_settings(tmp_path, env={"dataset_name": "from-cli"})
    assert settings.env == {"dataset_name": "from-cli", "group_size": 3, "max_agent_turns": 2}


@pytest.mark.parametrize(
    ("content", "expected"),
    [("{not json}\n", "line 1 is not JSON"), ("\n\n", "at least one item")],
)
def test_a_bad_items_file_is_a_usage_error(tmp_path: Path, content: str, expected: str) -> None:
    (tmp_path / "items.jsonl").write_text(content)
    with pytest.raises(ConfigError, match=expected):
        load_settings(tmp_path, items=str(tmp_path / "items.jsonl"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path, items="nowhere.jsonl")


@pytest.mark.slow
def test_the_pytest_gate_takes_items_and_env_settings(
    pytester: pytest.Pytester, hub: tuple[Path, Path]
) -> None:
    env, items = hub
    (pytester.path / "hub_env.py").write_text(env.read_text())
    (pytester.path / "items.jsonl").write_text(items.read_text())
    base = ("-p", "no:cacheprovider", "--hermes-conformance", "hub_env.py", "--hermes-select", "HC201,HC301")
    base += ("--hermes-set", "contain=false")  # see UNCONTAINED
    result = pytester.runpytest(*base, "--hermes-items", "items.jsonl", "-rA")
    result.assert_outcomes(passed=1, failed=1)  # HC201 fails; HC301 runs on the stand-in items
    result = pytester.runpytest(*base, "--hermes-env-set", "dataset_name=items.jsonl")
    result.assert_outcomes(passed=2)


def test_the_cli_reads_a_config_file_and_items_as_process_does(hub: tuple[Path, Path], capsys) -> None:
    from hermes_envs.cli import _parse, build_parser

    env, items = hub
    args = _parse(
        build_parser(), ["check", "e.py", "--config", "c.yaml", "--items", "i.jsonl", "--env.n", "1"]
    )
    assert (args.config, args.items, args.env) == ("c.yaml", "i.jsonl", {"n": 1})
    config = env.parent / "local.yaml"
    config.write_text(f"env:\n  dataset_name: {items}\nopenai:\n  model_name: unused\n")
    assert main(["check", str(env), "--select", "HC201", "--config", str(config), *UNCONTAINED]) == 0
    assert "PASSED         HC201" in capsys.readouterr().out
