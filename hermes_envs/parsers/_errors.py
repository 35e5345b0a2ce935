"""The parser package's errors: each derives from :class:`~hermes_envs.errors.HermesEnvsError` and a builtin."""

from __future__ import annotations

from hermes_envs.errors import HermesEnvsError, RegistryError, UnknownNameError

__all__ = ["ParserArgumentError", "ParserError", "ParserRegistrationError", "UnknownParserError"]


class ParserError(HermesEnvsError, ValueError):
    """``render`` was given tool calls (or content) that the format cannot express."""


class ParserRegistrationError(RegistryError):
    """A parser name was registered twice, or ``register_parser`` was misused."""


class UnknownParserError(UnknownNameError):
    """``get_parser`` was asked for a name nobody registered; the message lists the available names."""


class ParserArgumentError(HermesEnvsError, TypeError):
    """``parse`` was called with an argument of the wrong type (``tools=5``, bytes for the text ...).

    Raised instead of reporting the problem in ``errors``: a bad argument is the caller's bug, and reading the text
    without the schemas the caller meant to give would type the arguments wrongly without anyone noticing.
    """
