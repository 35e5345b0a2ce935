"""The ``docker`` backend: each task's commands run in its own Docker container, when a Docker daemon answers.

The container (``docker run --init``, image ``config.image``) mounts the task's folders at ``/workspace``,
``/tests``, ``/logs`` and ``/output``, so the file tools (which work on the host side of those folders) and the
commands see the same files. Each command is one ``docker exec``; the working directory carries over between
commands. A command that times out restarts the container: all its processes die, its files stay. Where no daemon
answers, the container-style sandbox stands in (said once).
"""

from __future__ import annotations

import secrets
import shlex
import shutil
import subprocess
import threading
import time
from pathlib import Path

from hermes_envs.errors import SandboxError

from ._output import CappedOutput
from .base import CommandResult, SandboxBackend, register_backend
from .container import CONTAINER_WORKDIR, ContainerBackend, warn_stand_in

__all__ = ["DockerBackend", "docker_answers"]

MOUNTED = ("workspace", "tests", "logs", "output")
_HOST_ONLY = frozenset({"PATH", "HOME", "PWD", "TMPDIR", "SHELL", "USER", "LOGNAME", "HERMES_SANDBOX_ID"})
_probe_lock = threading.Lock()
_probed: dict[str, bool] = {}


def docker_answers() -> bool:
    """True when a ``docker`` CLI is installed and its daemon answers (checked once)."""
    with _probe_lock:
        if "docker" not in _probed:
            exe = shutil.which("docker")
            ok = False
            if exe is not None:
                try:
                    ok = subprocess.run([exe, "info"], capture_output=True, timeout=10).returncode == 0
                except (OSError, subprocess.SubprocessError):
                    ok = False
            _probed["docker"] = ok
        return _probed["docker"]


@register_backend
class DockerBackend(SandboxBackend):
    """One Docker container per task, started on the first command and removed at cleanup."""

    name = "docker"
    container_paths = True
    links_confined = True

    @classmethod
    def stands_in_for(cls, name: str) -> type[SandboxBackend]:
        if docker_answers():
            return cls
        warn_stand_in(name, "no Docker daemon answers here")
        return ContainerBackend

    def __init__(self, workdir, config, env):
        super().__init__(workdir, config, env)
        self.tree = workdir.parent
        self.container = "hermes-" + secrets.token_hex(6)
        self.cwd = CONTAINER_WORKDIR
        self._started = False
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._interrupted = False
        self._exports: dict[str, str] = {}

    def export(self, variables: dict[str, str]) -> None:
        self._exports.update(variables)  # given to every later ``docker exec``

    def _docker(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["docker", *args], capture_output=True, timeout=timeout)

    def prepare(self) -> None:
        with self._lock:
            if self._started:
                return
            argv = ["run", "-d", "--rm", "--init", "--name", self.container, "-w", CONTAINER_WORKDIR]
            for folder in MOUNTED:
                (self.tree / folder).mkdir(exist_ok=True)
                argv += ["-v", f"{self.tree / folder}:/{folder}"]
            if self.config.memory_mb is not None:
                argv += ["--memory", f"{self.config.memory_mb}m"]
            if self.config.max_processes is not None:
                argv += ["--pids-limit", str(self.config.max_processes)]
            if not self.config.network:
                argv += ["--network", "none"]
            for key, value in sorted(self.env.items()):  # the allow-listed variables, minus the host's paths
                if key not in _HOST_ONLY:
                    argv += ["-e", f"{key}={value}"]
            done = self._docker(*argv, self.config.image, "sleep", "infinity", timeout=600)
            if done.returncode != 0:
                raise SandboxError(
                    f"docker should start a container from image {self.config.image!r}; got: "
                    f"{done.stderr.decode(errors='replace').strip()!r}. Fix: pull the image or set another one."
                )
            self._started = True

    def run(self, command: str, timeout: float) -> CommandResult:
        self.prepare()
        started = time.monotonic()
        mark = "__hermes_cwd_" + secrets.token_hex(4)
        script = (
            f"cd {shlex.quote(self.cwd)} 2>/dev/null; eval {shlex.quote(command)} </dev/null; __rc=$?; "
            f"printf '\\n%s%s\\n' {mark} \"$(pwd)\"; exit $__rc"
        )
        self._interrupted = False
        self._proc = subprocess.Popen(
            [
                "docker",
                "exec",
                *(f"-e{k}={v}" for k, v in self._exports.items()),
                self.container,
                "bash",
                "-c",
                script,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        timed_out = False
        try:
            data, _ = self._proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._restart()
            data, _ = self._proc.communicate()
        code = self._proc.returncode
        text = data.decode("utf-8", errors="replace")
        head, sep, tail = text.rpartition("\n" + mark)
        if sep:
            self.cwd = tail.strip() or self.cwd
            text = head
        out = CappedOutput(self.config.max_output_bytes)
        out.add(text.encode())
        shown, dropped = out.text()
        if timed_out:
            code = 124
            shown += f"\n[Command timed out after {timeout:g}s; the task's container was restarted (exit code 124).]"
        elif self._interrupted:
            code = 130
        return CommandResult(
            exit_code=code,
            output=shown,
            timed_out=timed_out,
            interrupted=self._interrupted and not timed_out,
            truncated_bytes=dropped,
            duration=time.monotonic() - started,
        )

    def shell_path(self, host: Path) -> str:
        return "/" + host.relative_to(self.tree).as_posix()

    def run_fresh(self, command: str, timeout: float) -> CommandResult:
        """A ``docker exec`` (a new bash) from /workspace, whatever directory the task's commands moved to."""
        with self._lock:
            saved, self.cwd = self.cwd, CONTAINER_WORKDIR
        try:
            return self.run(command, timeout)
        finally:
            self.cwd = saved

    def _restart(self) -> None:
        self._docker("restart", "-t", "0", self.container)
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    def interrupt(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._interrupted = True
            self._restart()

    def close(self) -> None:
        with self._lock:
            if self._started:
                self._docker("rm", "-f", self.container)
                self._started = False
