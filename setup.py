"""Build hook: the wheel, and an editable install too, also install ``hermes_envs_layout.pth`` at the top of
site-packages (one line that imports the standard-library-only :mod:`_hermes_envs_layout`, when it can), so upstream's ``tools.*``
and an author's own ``environments`` package resolve with nothing of hermes-envs imported first. Everything else is in
pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "hermes_envs_layout.pth"
# Guarded: where the module cannot be imported (an editable install's checkout not mounted inside a bwrap sandbox,
# say), every Python started there would print "Error processing line 1 of hermes_envs_layout.pth" on stderr, which
# commands' output (and the reward reading it) would carry. The hook is a convenience: without it nothing breaks.
PTH_LINE = 'import sys; exec("try:\\n import _hermes_envs_layout\\nexcept Exception:\\n pass")\n'


class BuildWithPth(build_py):
    """``build_py`` that also writes the ``.pth`` file into the wheel's root: the build folder for a wheel; for an
    editable install (``pip install -e``), the unpacked editable wheel (setuptools' ``install_lib`` there), since
    an editable wheel holds no file of the build folder. Its name sorts after setuptools' ``__editable__`` hook, so
    Python has that finder when this line imports ``_hermes_envs_layout`` from the checkout."""

    def run(self) -> None:
        super().run()
        target = self._pth_target()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(PTH_LINE, encoding="utf-8")

    def _pth_target(self) -> Path:
        if getattr(self, "editable_mode", False):
            return Path(self.get_finalized_command("install").install_lib) / PTH
        return Path(self.build_lib) / PTH

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs  # written straight into the editable wheel, not a build output to map
        return [*outputs, str(Path(self.build_lib) / PTH)]


setup(cmdclass={"build_py": BuildWithPth})
