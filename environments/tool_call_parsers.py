"""Upstream-layout import path for the tool-call parsers (``get_parser``, ``register_parser`` ...)."""

from hermes_envs.parsers import *  # noqa: F403  (the upstream module exposes the whole registry API)
from hermes_envs.parsers import __all__  # noqa: F401
