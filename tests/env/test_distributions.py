"""Toolset distributions: registration, re-registration by the same module imported again, sampling."""

from __future__ import annotations

import importlib.util
import random

import pytest

from hermes_envs.env import distributions, register_distribution, sample_toolsets
from hermes_envs.errors import ConfigError

MODULE = """
from hermes_envs.env import register_distribution

register_distribution("twice-dist", {"terminal": 1.0, "file": WEIGHT})
"""


@pytest.fixture(autouse=True)
def scratch():
    with distributions.DISTRIBUTIONS.isolated():
        yield


def _import_as(path, module_name):
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_same_module_imported_twice_registers_again_and_the_latest_wins(tmp_path):
    path = tmp_path / "dist_env.py"
    path.write_text(MODULE.replace("WEIGHT", "1.0"))
    _import_as(path, "dist_env")
    path.write_text(MODULE.replace("WEIGHT", "0.0"))  # edited between the two imports
    _import_as(path, "hermes_conformance_dist_env")  # what --hermes-conformance does
    assert sample_toolsets("twice-dist", random.Random(0)) == ["terminal"]


def test_a_name_taken_by_another_file_or_the_builtins_still_raises(tmp_path):
    (tmp_path / "one_env.py").write_text(MODULE.replace("WEIGHT", "1.0"))
    (tmp_path / "two_env.py").write_text(MODULE.replace("WEIGHT", "1.0"))
    _import_as(tmp_path / "one_env.py", "one_env")
    with pytest.raises(
        ConfigError, match=r"already registered by <module> in .*one_env\.py .*Fix: pick another name"
    ):
        _import_as(tmp_path / "two_env.py", "two_env")
    with pytest.raises(
        ConfigError,
        match=r"already registered by hermes-envs \(built in\) and again by .*Fix: pick another name",
    ):
        register_distribution("default", {"terminal": 1.0})


def test_a_second_call_in_the_same_file_says_so(tmp_path):
    path = tmp_path / "dup_env.py"
    path.write_text(
        MODULE.replace("WEIGHT", "1.0") + '\n\ndef again():\n    register_distribution("twice-dist", {})\n'
    )
    module = _import_as(path, "dup_env")
    with pytest.raises(ConfigError) as info:
        module.again()
    assert "pick another name" not in str(info.value)
    assert "register 'twice-dist' only once in dup_env.py" in str(info.value)
