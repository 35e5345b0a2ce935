"""The one-line start-up hook (hermes_envs_layout.pth) the wheel and an editable install add to site-packages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _pth_line() -> str:
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PTH_LINE":
            return str(ast.literal_eval(node.value))
    raise AssertionError("setup.py should define PTH_LINE")


def _start_with_hook(site_dir: Path) -> subprocess.CompletedProcess[str]:
    """A Python that processes ``site_dir``'s .pth files, with nothing else of this environment on sys.path."""
    code = f"import site; site.addsitedir({str(site_dir)!r})"
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=120
    )


def test_the_hook_is_silent_where_its_module_cannot_be_imported(tmp_path: Path) -> None:
    """An editable install's checkout is not mounted inside a bwrap sandbox: every Python started there printed
    "Error processing line 1 of ...hermes_envs_layout.pth" into the command's output, which rewards read."""
    (tmp_path / "hermes_envs_layout.pth").write_text(_pth_line(), encoding="utf-8")
    done = _start_with_hook(tmp_path)
    assert done.returncode == 0 and done.stderr == "" and done.stdout == ""


def test_the_hook_imports_its_module_where_it_can(tmp_path: Path) -> None:
    (tmp_path / "hermes_envs_layout.pth").write_text(_pth_line(), encoding="utf-8")
    (tmp_path / "_hermes_envs_layout.py").write_text("print('hooked')\n", encoding="utf-8")
    done = _start_with_hook(tmp_path)
    assert done.stdout == "hooked\n" and done.stderr == ""
