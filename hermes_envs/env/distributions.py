"""Toolset distributions: named rules that pick which toolsets a group of rollouts is offered.

A distribution maps each toolset to the probability (0..1) that it is offered; it is sampled once per group, so all
rollouts of a group see the same tools (their rewards stay comparable). Choose one with ``--env.distribution NAME``.
Upstream's distributions (``toolset_distributions.py``) are built in under their names, with their percentages as
probabilities; ``file_only`` is ours.
"""

from __future__ import annotations

import os
import random
import sys

from hermes_envs._definitions import Site
from hermes_envs._registry import Registry
from hermes_envs.errors import ConfigError, RegistryError

__all__ = [
    "DISTRIBUTIONS",
    "DistributionError",
    "list_distributions",
    "register_distribution",
    "sample_toolsets",
]


class DistributionError(RegistryError, ConfigError):
    """A distribution name registered twice by two different call sites, or bad weights."""


DISTRIBUTIONS: Registry[dict[str, float]] = Registry(
    "toolset distribution",
    error=DistributionError,
    unknown_error=None,
    unknown_fix="pass one of those to --env.distribution, or register_distribution() it in your env module.",
)

#: Upstream's distributions: name -> {toolset: percent}.
UPSTREAM: dict[str, dict[str, int]] = {
    "default": {
        "web": 100,
        "vision": 100,
        "image_gen": 100,
        "terminal": 100,
        "file": 100,
        "moa": 100,
        "browser": 100,
    },
    "image_gen": {"image_gen": 90, "vision": 90, "web": 55, "terminal": 45, "moa": 10},
    "research": {"web": 90, "browser": 70, "vision": 50, "moa": 40, "terminal": 10},
    "science": {
        "web": 94,
        "terminal": 94,
        "file": 94,
        "vision": 65,
        "browser": 50,
        "image_gen": 15,
        "moa": 10,
    },
    "development": {"terminal": 80, "file": 80, "moa": 60, "web": 30, "vision": 10},
    "safe": {"web": 80, "browser": 70, "vision": 60, "image_gen": 60, "moa": 50},
    "balanced": {
        "web": 50,
        "vision": 50,
        "image_gen": 50,
        "terminal": 50,
        "file": 50,
        "moa": 50,
        "browser": 50,
    },
    "minimal": {"web": 100},
    "terminal_only": {"terminal": 100, "file": 100},
    "terminal_web": {"terminal": 100, "file": 100, "web": 100},
    "creative": {"image_gen": 90, "vision": 90, "web": 30},
    "reasoning": {"moa": 90, "web": 30, "terminal": 20},
    "browser_use": {"browser": 100, "web": 80, "vision": 70},
    "browser_only": {"browser": 100},
    "browser_tasks": {"browser": 97, "vision": 12, "terminal": 15},
    "terminal_tasks": {"terminal": 97, "file": 97, "web": 97, "browser": 75, "vision": 50, "image_gen": 10},
    "mixed_tasks": {"browser": 92, "terminal": 92, "file": 92, "web": 35, "vision": 15, "image_gen": 15},
}

_BUILTIN: Site = (os.path.realpath(__file__), "<module>")


def _describe(weights: dict[str, float], site: Site | None) -> str:
    if site is None or site == _BUILTIN:
        return "hermes-envs (built in)"
    return f"{site[1]} in {site[0]}"


for _name, _percent in UPSTREAM.items():
    DISTRIBUTIONS.register(_name, {t: p / 100 for t, p in _percent.items()}, site=_BUILTIN)
DISTRIBUTIONS.register("file_only", {"file": 1.0}, site=_BUILTIN)


def _caller_site(depth: int = 2) -> Site:
    code = sys._getframe(depth).f_code
    return os.path.realpath(code.co_filename), getattr(code, "co_qualname", code.co_name)


def register_distribution(name: str, weights: dict[str, float]) -> None:
    """Register ``name`` as a distribution; a name that exists already is an error (names are global).

    The same call run again (same file and function: the env module imported a second time, e.g. under another
    module name by ``pytest --hermes-conformance``) is not a clash: the newer weights replace the earlier ones.
    """
    for toolset, p in weights.items():
        if not 0.0 <= float(p) <= 1.0:
            raise DistributionError(
                f"probability of toolset {toolset!r} in distribution {name!r} should be in [0, 1]; got {p!r}. "
                "Fix: upstream writes percentages; divide them by 100."
            )
    site = _caller_site()
    owner = DISTRIBUTIONS.site(name)
    fix = None
    if name in DISTRIBUTIONS and owner != site:
        same_file = owner is not None and owner[0] == site[0]
        fix = (
            f"register {name!r} only once in {os.path.basename(site[0])}."
            if same_file
            else "pick another name."
        )
    DISTRIBUTIONS.register(
        name, {k: float(v) for k, v in weights.items()}, site=site, describe=_describe, fix=fix
    )


def list_distributions() -> list[str]:
    """Names of the registered distributions, sorted."""
    return DISTRIBUTIONS.names()


def sample_toolsets(name: str, rng: random.Random | None = None) -> list[str]:
    """Draw the toolsets of one group from distribution ``name`` (never empty when any weight is positive)."""
    if name not in DISTRIBUTIONS:
        raise ConfigError(
            f"unknown toolset distribution {name!r}; available: {list_distributions()}. "
            "Fix: pass one of those to --env.distribution, or register_distribution() it in your env module."
        )
    weights = DISTRIBUTIONS.get(name)
    rng = rng or random.Random()
    chosen = [t for t, p in weights.items() if rng.random() < p]
    if not chosen:
        positive = [t for t, p in weights.items() if p > 0]
        if positive:
            chosen = [max(positive, key=lambda t: weights[t])]
    return chosen
