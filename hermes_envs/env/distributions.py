"""Toolset distributions: named rules that pick which toolsets a group of rollouts is offered.

A distribution maps each toolset to the probability (0..1) that it is offered; it is sampled once per group, so all
rollouts of a group see the same tools (their rewards stay comparable). Choose one with ``--env.distribution NAME``.
"""

from __future__ import annotations

import os
import random
import sys

from hermes_envs.errors import ConfigError

_DISTRIBUTIONS: dict[str, dict[str, float]] = {
    "default": {"terminal": 1.0, "file": 1.0},
    "terminal_only": {"terminal": 1.0},
    "file_only": {"file": 1.0},
}


_BUILTIN = (os.path.realpath(__file__), "<module>")
# Who registered each name: (real path of the calling file, qualified name of the calling function).
_SITES: dict[str, tuple[str, str]] = dict.fromkeys(_DISTRIBUTIONS, _BUILTIN)


def _caller_site(depth: int = 2) -> tuple[str, str]:
    code = sys._getframe(depth).f_code
    return os.path.realpath(code.co_filename), getattr(code, "co_qualname", code.co_name)


def register_distribution(name: str, weights: dict[str, float]) -> None:
    """Register ``name`` as a distribution; a name that exists already is an error (names are global).

    The same call run again (same file and function: the env module imported a second time, e.g. under another
    module name by ``pytest --hermes-conformance``) is not a clash: the newer weights replace the earlier ones.
    """
    site = _caller_site()
    owner = _SITES.get(name)
    if name in _DISTRIBUTIONS and owner != site:
        owner = owner or ("?", "?")
        where = "hermes-envs (built in)" if owner == _BUILTIN else f"{owner[1]} in {owner[0]}"
        if owner[0] == site[0]:
            fix = f"register {name!r} only once in {os.path.basename(site[0])}."
        else:
            fix = "pick another name."
        raise ConfigError(
            f"toolset distribution {name!r} should be registered once; it is already registered by {where}. "
            f"Fix: {fix}"
        )
    for toolset, p in weights.items():
        if not 0.0 <= float(p) <= 1.0:
            raise ConfigError(
                f"probability of toolset {toolset!r} in distribution {name!r} should be in [0, 1]; got {p!r}."
            )
    _DISTRIBUTIONS[name] = {k: float(v) for k, v in weights.items()}
    _SITES[name] = site


def list_distributions() -> list[str]:
    """Names of the registered distributions, sorted."""
    return sorted(_DISTRIBUTIONS)


def sample_toolsets(name: str, rng: random.Random | None = None) -> list[str]:
    """Draw the toolsets of one group from distribution ``name`` (never empty when any weight is positive)."""
    try:
        weights = _DISTRIBUTIONS[name]
    except KeyError:
        raise ConfigError(
            f"unknown toolset distribution {name!r}; available: {list_distributions()}. "
            "Fix: pass one of those to --env.distribution, or register_distribution() it in your env module."
        ) from None
    rng = rng or random.Random()
    chosen = [t for t, p in weights.items() if rng.random() < p]
    if not chosen:
        positive = [t for t, p in weights.items() if p > 0]
        if positive:
            chosen = [max(positive, key=lambda t: weights[t])]
    return chosen
