"""Configuration precedence: command line > the env's conformance_ignore > pyproject; thresholds from pyproject."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Status
from hermes_envs.conformance._runner import load_settings
from hermes_envs.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
pytest_plugins = ["pytester"]

EXAMPLE = (Path(__file__).parents[2] / "environments" / "arithmetic_env.py").read_text()
IGNORING = EXAMPLE.replace(
    '    name = "arithmetic-terminal"\n',
    '    name = "arithmetic-terminal"\n    conformance_ignore = {"HC105": "named elsewhere"}\n',
)


def test_thresholds_come_from_pyproject_and_the_command_line_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hermes-conformance]\ncontrol_ceiling = 0.3\nsetup_seconds = 5\nselect = ["HC4"]\n'
    )
    settings = load_settings(tmp_path)
    assert (settings.control_ceiling, settings.setup_seconds, settings.select) == (0.3, 5, ["HC4"])
    assert settings.forced == []
    settings = load_settings(tmp_path, select=["HC1"], slow=True)
    assert settings.select == ["HC1"] and settings.forced == ["HC1"] and settings.slow is True


def test_forced_is_not_a_pyproject_key(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.hermes-conformance]\nforced = ["HC1"]\n')
    with pytest.raises(ConfigError, match="should not set `forced`"):
        load_settings(tmp_path)


def test_the_env_can_ignore_a_check_with_a_reason_and_the_command_line_overrides_it(tmp_path: Path) -> None:
    path = tmp_path / "ignoring_env.py"
    path.write_text(IGNORING.replace('name = "arithmetic-terminal"', "name = None"))
    with EnvSession(path, settings=load_settings(tmp_path, select=["HC1"])) as session:
        outcome = session.run("HC105")
    assert outcome.status is Status.WARNED  # named on the command line: it runs
    with EnvSession(path, settings=load_settings(tmp_path)) as session:
        outcome = session.run("HC105")
    assert outcome.status is Status.SKIPPED and "named elsewhere" in outcome.note


def test_command_line_overrides_win_over_pyproject(tmp_path, capsys) -> None:
    from hermes_envs.cli import main
    from hermes_envs.conformance._runner import load_settings, parse_overrides

    (tmp_path / "pyproject.toml").write_text(
        "[tool.hermes-conformance]\ncontrol_ceiling = 0.1\nslow = false\n"
    )
    settings = load_settings(
        tmp_path, **parse_overrides(["control_ceiling=0.35", "slow=true", "ignore=[HC105]"])
    )
    assert (settings.control_ceiling, settings.slow, settings.ignore) == (0.35, True, ["HC105"])
    bad = str(ROOT / "conformance" / "bad" / "reward_credits_finishing.py")
    assert main(["check", bad, "--select", "HC406", "--set", "control_ceiling=1.0"]) == 0
    assert main(["check", bad, "--select", "HC406"]) == 1
    assert main(["check", bad, "--set", "no_such_setting=1"]) == 4  # a usage error, as pytest exits
    assert "no_such_setting" in capsys.readouterr().err


@pytest.mark.slow  # two in-process pytest runs of HC406 (it scores control policies: a few seconds each)
def test_plugin_hermes_set(pytester) -> None:
    pytester.makepyfile(
        bad_env=(ROOT / "conformance" / "bad" / "reward_credits_finishing.py").read_text(),
        _good=(ROOT / "conformance" / "bad" / "_good.py")
        .read_text()
        .replace(
            'Path(__file__).resolve().parents[1] / "good"', f"Path({str(ROOT / 'conformance' / 'good')!r})"
        ),
    )
    args = ["-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function"]
    args += ["--hermes-conformance", "bad_env.py", "--hermes-select", "HC406"]
    pytester.runpytest(*args).assert_outcomes(failed=1)
    pytester.runpytest(*args, "--hermes-set", "control_ceiling=1.0").assert_outcomes(passed=1)
