"""Build hook: the wheel also installs ``hermes_envs_layout.pth`` at the top of site-packages (one line that imports
the standard-library-only :mod:`_hermes_envs_layout`), so upstream's ``tools.*`` and an author's own
``environments`` package resolve with nothing of hermes-envs imported first. Everything else is in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "hermes_envs_layout.pth"


class BuildWithPth(build_py):
    """``build_py`` that also writes the ``.pth`` file into the build folder (so it lands in the wheel's root)."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / PTH
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("import _hermes_envs_layout\n", encoding="utf-8")

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / PTH)]


setup(cmdclass={"build_py": BuildWithPth})
