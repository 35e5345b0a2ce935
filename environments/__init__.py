"""Upstream-layout modules (``environments.hermes_base_env`` ...) and example environments.

Env files written for the hermes-agent layout import ``environments.hermes_base_env`` and friends; these modules
re-export hermes-envs so such files run unchanged. Importing this package also makes upstream's
``tools.terminal_tool`` / ``tools.budget_config`` importable, only where no real ``tools`` package exists
(see :mod:`hermes_envs.compat`), and lets an author's own ``environments`` package
(``environments/benchmarks/<name>/`` ...) be imported alongside these modules, whichever is first on ``sys.path``.
"""

from hermes_envs.compat import install_layout

install_layout()
