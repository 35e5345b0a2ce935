"""Shapes of real-world env files (issue 30, part 3): the finding names the real cause, in the words it must use.

Each env here is written for the test in the shape third-party env files take: a base class replaced by a stub
after a failed import, a class defined under a flag that came out False, a file inside a package with relative
imports, a missing module of the env's own package, a module of upstream's surface hermes-envs lacks.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from hermes_envs.conformance import EnvSession, Settings, Status

HC1 = Settings(select=["HC1"])


def _write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def _outcomes(path: Path, settings: Settings = HC1) -> dict[str, object]:
    with EnvSession(path, settings=settings) as session:
        return {o.check_id: o for o in session.run_all()}


def test_a_stub_base_names_the_import_that_failed_and_the_real_base(tmp_path: Path) -> None:
    env = _write(
        tmp_path / "stub_env.py",
        """
        try:
            from environments.hermes_base_env import HermesAgentBaseEnv
            import missing_helper_pkg_for_stub
        except ImportError:
            class HermesAgentBaseEnv:
                pass


        class StubbedEnv(HermesAgentBaseEnv):
            name = "stubbed"
        """,
    )
    found = _outcomes(env)
    (finding,) = found["HC102"].findings
    assert "stand-in HermesAgentBaseEnv" in finding.message and "line 5" in finding.message
    assert "`import missing_helper_pkg_for_stub` (line 3) failed" in finding.message
    assert "The real HermesAgentBaseEnv comes from environments.hermes_base_env" in finding.message
    assert "install the package that provides it" in finding.fix
    assert "found none" not in finding.message


def test_a_class_under_a_false_flag_names_the_flag_and_the_import(tmp_path: Path) -> None:
    env = _write(
        tmp_path / "flag_env.py",
        """
        try:
            from environments.hermes_base_env import HermesAgentBaseEnv
            from environments.agent_loop import AgentResult, NotAnUpstreamName
            HERMES_AVAILABLE = True
        except ImportError:
            HERMES_AVAILABLE = False

        if HERMES_AVAILABLE:
            class FlaggedEnv(HermesAgentBaseEnv):
                name = "flagged"

                async def compute_reward(self, item, result, ctx):
                    return 0.0
        """,
    )
    (finding,) = _outcomes(env)["HC102"].findings
    assert "under `if HERMES_AVAILABLE:` (line 8)" in finding.message
    assert "HERMES_AVAILABLE is False" in finding.message
    assert "`from environments.agent_loop import AgentResult, NotAnUpstreamName` (line 3)" in finding.message
    # a name of hermes-envs' own stand-in module: a possible gap of the kit, not the author's mistake
    assert "gap of the kit" in finding.fix and "NotAnUpstreamName" in finding.fix


def test_a_file_inside_a_package_is_loaded_as_a_member_of_it(tmp_path: Path) -> None:
    package = tmp_path / "my_envs"
    _write(package / "__init__.py", "")
    _write(package / "letters" / "__init__.py", "")
    _write(package / "common.py", "SYSTEM = 'be brief'\n")
    _write(package / "letters" / "data.py", "WORDS = ['banana']\n")
    env = _write(
        package / "letters" / "letters_env.py",
        (Path(__file__).parents[2] / "conformance" / "good" / "exact_answer_env.py").read_text()
        + "\nfrom .data import WORDS as _W\nfrom ..common import SYSTEM as _S\n",
    )
    found = _outcomes(env)
    assert found["HC101"].status is Status.PASSED, found["HC101"].findings
    assert found["HC102"].status is Status.PASSED
    assert found["HC109"].status is Status.PASSED


def test_a_relative_import_outside_a_package_says_what_is_missing(tmp_path: Path) -> None:
    env = _write(tmp_path / "loose" / "loose_env.py", "from .helpers import thing\n")
    (finding,) = _outcomes(env)["HC101"].findings
    assert "relative import" in finding.message and "no __init__.py" in finding.message
    assert "add an __init__.py" in finding.fix


def test_a_missing_sibling_module_is_the_envs_own_not_upstreams(tmp_path: Path) -> None:
    # An env living in an upstream-style checkout: environments/<its folder>/, importing a helper of its own folder.
    env = _write(
        tmp_path / "environments" / "trivia_env" / "trivia_env.py",
        "from environments.trivia_env.questions import QUESTIONS\n",
    )
    (finding,) = _outcomes(env)["HC101"].findings
    text = finding.message + finding.fix
    assert "your own module" in text and "environments/trivia_env" in text
    assert "upstream hermes-agent module" not in text and "pip install" not in text
    assert "install" not in finding.fix


def test_a_missing_submodule_of_an_installed_package_never_advises_installing_it(tmp_path: Path) -> None:
    env = _write(tmp_path / "yaml_env.py", "import yaml.not_a_submodule_xyz\n")
    (finding,) = _outcomes(env)["HC101"].findings
    assert "'yaml' is installed" in finding.message and "install" not in finding.fix


def test_an_upstream_module_hermes_envs_lacks_is_a_gap_of_the_kit(tmp_path: Path) -> None:
    env = _write(tmp_path / "registry_env.py", "from tools.registry_not_shipped_xyz import registry\n")
    (finding,) = _outcomes(env)["HC101"].findings
    assert "gap of the kit, not a mistake in your env" in finding.message
    assert "tools.registry_not_shipped_xyz" in finding.message


def test_a_module_that_does_not_import_is_still_judged_from_its_source(tmp_path: Path) -> None:
    env = _write(
        tmp_path / "offline_broken_env.py",
        """
        import not_installed_anywhere_xyz
        from environments.hermes_base_env import HermesAgentBaseEnv


        class BrokenEnv(HermesAgentBaseEnv):
            name = "broken"

            def compute_reward(self, item, result, ctx):
                return 1.0 if result["final_response"] == item["answer"] else 0.0

            async def format_prompt(self, item):
                return item["q"]
        """,
    )
    found = _outcomes(env, Settings())
    assert found["HC101"].status is Status.FAILED
    kinds = " ".join(f.message for f in found["HC103"].findings)
    assert "BrokenEnv.compute_reward (line 8) should be `async def`" in kinds
    assert "BrokenEnv.format_prompt (line 11) should be a plain `def`" in kinds
    assert "judged from the source" in kinds and "judged from the source" in found["HC103"].note
    (dict_read,) = found["HC401"].findings
    assert "line 9" in dict_read.message and 'result["final_response"]' in dict_read.message
    assert found["HC106"].status is Status.WARNED
    assert (
        found["HC201"].status is Status.SKIPPED and found["HC201"].note == "needs HC101, which did not pass"
    )
    assert found["HC108"].status is Status.SKIPPED  # no static counterpart: skipped, never crashed


GOOD_SOURCE = (Path(__file__).parents[2] / "conformance" / "good" / "exact_answer_env.py").read_text()


def test_a_missing_compute_reward_is_one_finding_not_two(tmp_path: Path) -> None:
    start, end = (
        GOOD_SOURCE.index("    async def compute_reward"),
        GOOD_SOURCE.index("    async def evaluate"),
    )
    env = _write(tmp_path / "no_reward_env.py", GOOD_SOURCE[:start] + GOOD_SOURCE[end:])
    found = _outcomes(env, Settings(select=["HC1", "HC201"]))
    failed = [o.check_id for o in found.values() if o.status is Status.FAILED]
    assert failed == ["HC103"] and "compute_reward missing" in found["HC103"].findings[0].message
    assert found["HC109"].status is Status.SKIPPED and "(see HC103)" in found["HC109"].note
    assert "compute_reward unimplemented" in found["HC109"].note


def test_an_import_failing_inside_evaluate_is_named_as_an_import_not_a_split(tmp_path: Path) -> None:
    source = GOOD_SOURCE.replace(
        "    async def evaluate(self, *args, **kwargs) -> None:\n",
        "    async def evaluate(self, *args, **kwargs) -> None:\n"
        "        from environments.terminal_test_env import TerminalTestEnv  # noqa: F401\n",
    )
    env = _write(tmp_path / "eval_import_env.py", source)
    (finding,) = _outcomes(env, Settings(select=["HC202"]))["HC202"].findings
    assert "an import inside it failed" in finding.message and "not a split problem" in finding.message
    assert "gap of the kit" in finding.message and "environments.terminal_test_env" in finding.message
    assert "held-out eval list" not in finding.fix


def test_a_name_missing_from_an_upstream_module_we_provide_is_a_gap_of_the_kit(tmp_path: Path) -> None:
    source = GOOD_SOURCE.replace(
        "    async def get_next_item(self) -> dict:\n",
        "    async def get_next_item(self) -> dict:\n        import toolsets\n\n"
        "        toolsets.a_helper_only_upstream_has()\n",
    )
    env = _write(tmp_path / "gap_env.py", source)
    (finding,) = _outcomes(env, Settings(select=["HC202"]))["HC202"].findings
    assert "hermes-envs' toolsets" in finding.message and "`a_helper_only_upstream_has`" in finding.message
    assert "gap of the kit, not a mistake in your env" in finding.message
    assert finding.fix.startswith("nothing in the env")


def test_an_attribute_upstreams_base_provides_and_ours_lacks_is_a_gap_of_the_kit(tmp_path: Path) -> None:
    from hermes_envs.env import HermesAgentBaseEnv
    from hermes_envs.env._causes import kit_gap

    class GapEnv(HermesAgentBaseEnv):  # (never built: only its class hierarchy is read)
        pass

    env_file = _write(tmp_path / "gap_env.py", "def f(self):\n    return self._upstream_group_state\n")
    error = "AttributeError: 'GapEnv' object has no attribute '_upstream_group_state'"
    # a name upstream's base has and hermes-envs' lacks (every real one is provided by now: a made-up one here)
    upstream = frozenset({"_upstream_group_state"})
    gap = kit_gap(error, GapEnv, env_file, upstream_attributes=upstream)
    assert gap is not None and "`self._upstream_group_state`, which it never sets itself" in gap
    assert "gap of the kit, not a mistake in your env" in gap
    assert kit_gap(error, GapEnv, env_file) is None  # not one of upstream's: the env's own bug
    sets_it = _write(tmp_path / "sets_env.py", "def f(self):\n    self._upstream_group_state = {}\n")
    assert kit_gap(error, GapEnv, sets_it, upstream_attributes=upstream) is None  # the env's own attribute


def test_an_attribute_upstream_does_not_have_is_the_envs_own_bug(tmp_path: Path) -> None:
    source = GOOD_SOURCE.replace(
        "    async def get_next_item(self) -> dict:\n",
        "    async def get_next_item(self) -> dict:\n        self._typo_of_an_attribute.clear()\n",
    )
    env = _write(tmp_path / "typo_env.py", source)
    (finding,) = _outcomes(env, Settings(select=["HC202"]))["HC202"].findings
    assert "_typo_of_an_attribute" in finding.message and "gap of the kit" not in finding.message


def test_an_attribute_the_env_sets_itself_is_never_called_a_gap_of_the_kit(tmp_path: Path) -> None:
    source = GOOD_SOURCE.replace(
        "    async def get_next_item(self) -> dict:\n",
        "    async def get_next_item(self) -> dict:\n"
        "        if self.index > 100:\n            self._own_cache = {}\n"
        "        self._own_cache.clear()\n",
    )
    env = _write(tmp_path / "own_attr_env.py", source)
    (finding,) = _outcomes(env, Settings(select=["HC202"]))["HC202"].findings
    assert "_own_cache" in finding.message and "gap of the kit" not in finding.message


def test_config_init_and_parser_are_judged_from_the_source_when_the_import_fails(tmp_path: Path) -> None:
    env = _write(
        tmp_path / "cfg_env.py",
        """
        from some_private_dataset_lib_xyz import rows
        from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
        from atroposlib.envs.server_handling.server_manager import APIServerConfig


        class CfgEnv(HermesAgentBaseEnv):
            name = "cfg"

            @classmethod
            def config_init(cls):
                config = HermesAgentEnvConfig(tool_call_parser="hermess")
                return config, APIServerConfig(base_url="http://localhost:8000/v1", model_name="m")
        """,
    )
    found = _outcomes(env, Settings(select=["HC1", "HC8"]))
    (servers,) = found["HC104"].findings
    assert "LIST of APIServerConfig; line 12 returns a single APIServerConfig" in servers.message
    (parser,) = found["HC801"].findings
    assert "'hermess' at line 11" in parser.message and "judged from the source" in parser.message
    assert found["HC105"].status is Status.PASSED and found["HC802"].status is Status.SKIPPED
