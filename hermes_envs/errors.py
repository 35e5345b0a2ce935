"""Errors raised by hermes-envs.

Every error a user can trigger derives from :class:`HermesEnvsError` and, where one fits, from the builtin
exception a Python user would expect (``ValueError``, ``PermissionError`` ...), so ``except ValueError`` still works.
Messages are written for the environment author: what was wrong, then how to fix it.
"""

from __future__ import annotations


class HermesEnvsError(Exception):
    """Root of every error raised on purpose by hermes-envs."""


class ConfigError(HermesEnvsError, ValueError):
    """A setting or argument has a value we cannot use."""


class ScriptError(HermesEnvsError, ValueError):
    """A fake-server script (YAML/JSON/Python) is malformed; the message names the line or field."""


class SandboxError(HermesEnvsError, RuntimeError):
    """The per-task sandbox could not do what was asked (start, run, clean up)."""


class PathEscapeError(SandboxError, PermissionError):
    """A file path resolves outside the task's private working directory."""


class RegistryError(HermesEnvsError, ValueError):
    """A name was registered twice by two different definitions (parsers, tools, backends, policies, checks ...)."""


class UnknownNameError(HermesEnvsError, KeyError):
    """A name was looked up in a registry that does not hold it; the message lists the known names."""

    def __str__(self) -> str:  # KeyError would repr() the message, quoting it
        return str(self.args[0]) if self.args else ""


class ToolRegistryError(RegistryError):
    """A tool or toolset was registered twice, or a name does not exist."""


class EnvLoadError(HermesEnvsError, ImportError):
    """An environment file could not be imported or holds no usable environment class."""


class UsageError(HermesEnvsError, RuntimeError):
    """An API was called in a state that does not allow it (a guard entered twice, sync dispatch inside a loop)."""


class ArgumentTypeError(HermesEnvsError, TypeError):
    """An argument or data value has a type we cannot use; the message names the type expected."""


class MissingFileError(HermesEnvsError, FileNotFoundError):
    """A file or folder the user named does not exist."""
