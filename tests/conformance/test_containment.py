"""The env under test runs contained: what it writes, starts and ends stays in the container, and each effect is
named in a finding with the env's file:line, by `hermes-envs check` and by the pytest gate alike; an env that ends
its own process fails the check with that cause, and the report is still written by the kit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from hermes_envs.conformance._container import containable
from hermes_envs.testing.offline import offline_environ

ROOT = Path(__file__).parents[2]
EXAMPLE = (ROOT / "environments" / "arithmetic_env.py").read_text()
SETUP = "    async def setup(self) -> None:\n"
REWARD = "    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:\n"

pytestmark = pytest.mark.skipif(bool(containable()), reason=f"no container here: {containable()}")


def _env(tmp_path: Path, *, module: str = "", setup: str = "", reward: str = "") -> tuple[Path, Path]:
    """A checkout (with .git) holding the example env with code added at import, in setup() and in the reward."""
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    text = EXAMPLE.replace(SETUP, SETUP + setup).replace(REWARD, REWARD + reward) + module
    env_file = checkout / "hostile_env.py"
    env_file.write_text(text)
    return checkout, env_file


def _run(argv: list[str], cwd: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, **offline_environ(), "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    env["HERMES_TEST_API_KEY"] = "sk-test-not-a-real-key"
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _check(env_file: Path, cwd: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "hermes_envs.cli", "check", str(env_file), *extra], cwd, tmp)


def _running(marker: str) -> list[str]:
    """Command lines of the host's processes that mention ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmd and "pytest" not in cmd:
                found.append(cmd)
    return found


def _host_findings(report: Path) -> list[dict]:
    data = json.loads(report.read_text())
    return [f for e in data["envs"] for c in e["checks"] if c["id"] == "HC903" for f in c["findings"]]


@pytest.fixture
def hostile(tmp_path: Path):
    """The env of issue #30: a cache beside the run (import), a folder at the host's root (setup), a file and a
    process left running by a reward subprocess; yields (checkout, env file, host paths, sleep marker)."""
    token = uuid.uuid4().hex[:8]
    at_root = Path(f"/hermes-contain-test-{token}")
    by_subprocess = tmp_path / "outside" / "from_reward.txt"
    by_subprocess.parent.mkdir()
    by_thread = by_subprocess.parent / "from_thread.txt"
    seconds = str(3000 + int(token[:3], 16))
    checkout, env_file = _env(
        tmp_path,
        module='\nfrom pathlib import Path as _P\n_P("cache_beside_run.json").write_text("{}")\n'
        '_KEY = __import__("os").environ.get("HERMES_TEST_API_KEY")\n',
        setup=f'        import os as _os, threading as _th\n        _os.makedirs("{at_root}/data", exist_ok=True)\n'
        f'        open("{at_root}/data/items.txt", "w").write("x")\n'
        f'        _t = _th.Thread(target=lambda: open("{by_thread}", "w").write("x"))\n        _t.start(); _t.join()\n',
        reward="        import subprocess as _sp\n"
        f'        _sp.Popen(["sh", "-c", "echo x > {by_subprocess}; exec sleep {seconds}"])\n',
    )
    paths = (checkout / "cache_beside_run.json", at_root, by_subprocess, by_thread)
    yield checkout, env_file, paths, f"sleep {seconds}"
    import shutil

    shutil.rmtree(at_root, ignore_errors=True)  # only when containment failed (the test has failed then)


@pytest.mark.slow
def test_check_leaves_the_host_untouched_and_names_each_effect(hostile, tmp_path: Path) -> None:
    checkout, env_file, paths, sleeper = hostile
    report = tmp_path / "report.json"
    done = _check(
        env_file, checkout, tmp_path / "tmp", "--select", "HC201,HC401,HC903", "--report", str(report)
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    for path in paths:
        assert not path.exists(), f"{path} reached the host"
    assert sorted(p.name for p in checkout.iterdir()) == [".git", "hostile_env.py"]
    assert _running(sleeper) == []
    findings = {f["subject"]: f for f in _host_findings(report)}
    cache = findings[str(paths[0])]
    assert (
        cache["severity"] == "error"
        and "hostile_env.py:" in cache["message"]
        and "during import" in cache["message"]
    )
    root = findings[str(paths[1])]
    assert (
        root["severity"] == "warning"
        and "during setup" in root["message"]
        and "items.txt" not in root["subject"]
    )
    assert "hostile_env.py:" in root["message"]
    thread = findings[str(paths[3])]
    assert "hostile_env.py:" in thread["message"] and "during setup" in thread["message"]
    sub = findings[str(paths[2])]
    assert "a process the env started" in sub["message"] and "sh -c" in sub["message"]
    secret = findings["HERMES_TEST_API_KEY"]
    assert secret["severity"] == "warning" and "during import" in secret["message"]
    assert "sk-test" not in json.dumps(findings)
    left = [f for f in findings.values() if "still running" in f["message"]]
    assert left and left[0]["severity"] == "error" and sleeper in left[0]["message"]


@pytest.mark.slow
def test_the_pytest_gate_leaves_the_host_untouched_and_names_each_effect(hostile, tmp_path: Path) -> None:
    checkout, env_file, paths, sleeper = hostile
    report = tmp_path / "gate.json"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    argv += ["--hermes-conformance", str(env_file), "--hermes-select", "HC201,HC401,HC903"]
    done = _run([*argv, f"--hermes-report={report}", "-W", "ignore"], checkout, tmp_path / "tmp")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    for path in paths:
        assert not path.exists(), f"{path} reached the host"
    assert sorted(p.name for p in checkout.iterdir()) == [".git", "hostile_env.py"]
    assert _running(sleeper) == []
    assert "HC903" in done.stdout and "cache_beside_run.json" in done.stdout
    subjects = {f["subject"] for f in _host_findings(report)}
    assert {str(p) for p in paths} <= subjects


@pytest.mark.slow
def test_an_env_that_exits_in_setup_fails_with_that_cause_and_cannot_rewrite_the_report(
    tmp_path: Path,
) -> None:
    marker = f"sleep {4000 + os.getpid() % 997}"
    checkout, env_file = _env(
        tmp_path,
        module="\nimport atexit as _ax, sys as _sys\n"
        "def _forge():\n"
        "    if '--report' in _sys.argv:\n"
        "        open(_sys.argv[_sys.argv.index('--report') + 1], 'w').write('{\"failed\": false, \"envs\": []}')\n"
        "_ax.register(_forge)\n",
        setup=f'        import subprocess as _sp\n        _sp.Popen("{marker}".split())\n'
        "        raise SystemExit(0)\n",
    )
    report = tmp_path / "report.json"
    done = _check(
        env_file, checkout, tmp_path / "tmp", "--select", "HC201,HC202,HC903", "--report", str(report)
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["failed"] is True
    checks = {c["id"]: c for c in data["envs"][0]["checks"]}
    message = checks["HC201"]["findings"][0]["message"]
    assert "SystemExit(0)" in message and "hostile_env.py:" in message and "setup" in message
    assert checks["HC202"]["status"] == "skipped" and "SystemExit(0)" in checks["HC202"]["note"]
    assert _running(marker) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "named"),
    [
        ("import os as _os; _os._exit(0)", "os._exit(0)"),
        ("import os as _os, signal as _sg; _os.killpg(0, _sg.SIGKILL)", "os.killpg(0, 9)"),
        ("raise SystemExit(0)", "SystemExit(0)"),
        ("import ctypes as _c; _c.string_at(0)", "killed by SIGSEGV"),
    ],
)
def test_an_env_that_ends_its_process_in_the_reward_fails_with_that_cause(
    tmp_path: Path, code: str, named: str
) -> None:
    checkout, env_file = _env(tmp_path, reward=f"        {code}\n")
    report = tmp_path / "report.json"
    done = _check(env_file, checkout, tmp_path / "tmp", "--select", "HC401", "--report", str(report))
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert named in done.stdout and "hostile_env.py:" in done.stdout
    checks = {c["id"]: c for c in json.loads(report.read_text())["envs"][0]["checks"]}
    assert checks["HC401"]["status"] == "failed" and named in checks["HC401"]["findings"][0]["message"]


LOCAL_TOOL = '''
from hermes_envs.tools import tool as _tool


@_tool(toolset="local_files")
def save_note(path: str, content: str) -> str:
    """Save a note (a `local` tool: relative paths land in the process's working directory).

    Args:
        path: Where to write.
        content: What to write.
    """
    with open(path, "w") as fh:
        fh.write(content)
    return "saved"
'''


@pytest.mark.slow
def test_the_kits_probes_never_run_a_real_tool_on_the_host(tmp_path: Path) -> None:
    checkout, env_file = _env(tmp_path, module=LOCAL_TOOL)
    env_file.write_text(env_file.read_text().replace('["terminal"]', '["terminal", "local_files"]'))
    before = sorted(p.name for p in checkout.iterdir())
    report = tmp_path / "report.json"
    done = _check(
        env_file, checkout, tmp_path / "tmp", "--select", "HC4,HC802,HC903", "--report", str(report)
    )
    assert sorted(p.name for p in checkout.iterdir()) == before, done.stdout[-3000:]
    written = [f for f in _host_findings(report) if f["subject"].startswith(str(checkout))]
    assert written and "hostile_env.py:" in written[0]["message"] and written[0]["severity"] == "error"


CONNECTS = """        import ctypes as _ct, socket as _so, struct as _st, subprocess as _sp, sys as _sy
        if not getattr(_sy, "_connected_once", False):
            _sy._connected_once = True
            _sp.run([_sy.executable, "-c", "import socket; socket.create_connection(('203.0.113.9', 8080), 5)"])
            _s = _so.socket()
            _a = _st.pack("HH4s8x", _so.AF_INET, _so.htons(443), _so.inet_aton("198.51.100.7"))
            _ct.CDLL(None, use_errno=True).connect(_s.fileno(), _a, len(_a))
            _s.close()
"""


@pytest.mark.slow
def test_connections_through_a_subprocess_and_ctypes_are_reported(tmp_path: Path) -> None:
    checkout, env_file = _env(tmp_path, reward=CONNECTS)
    report = tmp_path / "report.json"
    done = _check(env_file, checkout, tmp_path / "tmp", "--select", "HC401,HC902", "--report", str(report))
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    checks = {c["id"]: c for c in json.loads(report.read_text())["envs"][0]["checks"]}
    found = {f["subject"]: f["message"] for f in checks["HC902"]["findings"]}
    assert "a process the env started" in found["203.0.113.9:8080"] and "python" in found["203.0.113.9:8080"]
    assert "native code in the env's process at hostile_env.py:" in found["198.51.100.7:443"]
    assert all(f["severity"] == "error" for f in checks["HC902"]["findings"])


def test_without_a_container_the_env_is_traced_and_the_run_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_envs.conformance._runner import run_conformance
    from hermes_envs.conformance._settings import Settings

    checkout, env_file = _env(tmp_path, module='\nopen("written_at_import.txt", "w").write("x")\n')
    monkeypatch.chdir(checkout)
    with pytest.warns(RuntimeWarning, match="NOT contained: namespaces are switched off"):
        report = run_conformance([str(env_file)], Settings(select=["HC101", "HC903"], namespaces=False))
    (outcome,) = [o for o in report.envs[0].outcomes if o.check_id == "HC903"]
    assert outcome.note.startswith("traced only, not contained")
    (finding,) = outcome.findings
    assert finding.subject == str(checkout / "written_at_import.txt") and "hostile_env.py:" in finding.message
    assert finding.severity.value == "error"  # the checkout, written for real this time


def test_with_a_kit_thread_running_the_container_starts_from_a_fresh_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fork would inherit the thread's locks and executors half-made (a child that hangs on its first tool call).
    import threading

    from hermes_envs.conformance._contained import run_env_contained
    from hermes_envs.conformance._settings import Settings

    checkout, env_file = _env(tmp_path, module='\nopen("written_at_import.txt", "w").write("x")\n')
    monkeypatch.chdir(checkout)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="hermes-test-busy", daemon=True)
    thread.start()
    try:
        run = run_env_contained(env_file.resolve(), None, Settings(select=["HC101", "HC903"]))
    finally:
        stop.set()
    assert run.container.started == "fresh"
    assert sorted(p.name for p in checkout.iterdir()) == [".git", "hostile_env.py"]
    (outcome,) = [o for o in run.outcomes if o.check_id == "HC903"]
    assert [f.subject for f in outcome.findings] == [str(checkout / "written_at_import.txt")]
    (imported,) = [o for o in run.outcomes if o.check_id == "HC101"]
    assert imported.status.value == "passed", imported  # the fresh interpreter registers the catalogue itself


def probe_writes(paths: list[str]) -> object:
    """A container worker that writes each of ``paths`` and sends what happened (used by the test below)."""

    def run(fd: int, kit_tmp: str) -> None:
        outcome = {}
        for path in paths:
            try:
                Path(path).write_text("x")
                outcome[path] = "wrote"
            except OSError as exc:
                outcome[path] = exc.strerror or str(exc)
        os.write(fd, (json.dumps({"ev": "probe", **outcome}) + "\n").encode())

    return run


@pytest.mark.parametrize("start", ["fork", "fresh"], ids=["forked", "fresh-interpreter"])
def test_shared_memory_and_the_kernels_knobs_are_not_the_hosts(start: str) -> None:
    from hermes_envs.conformance._container import run_contained

    shm = f"/dev/shm/hermes-contain-{uuid.uuid4().hex[:8]}"
    result = run_contained(  # (the fresh interpreter imports this test module too)
        f"{__name__}:probe_writes", [[shm, "/proc/sys/kernel/hostname", "/sys/hermes-probe"]], start=start
    )
    (probe,) = [e for e in result.events if e.get("ev") == "probe"]
    assert (
        probe[shm] == "wrote" and not Path(shm).exists()
    )  # its own /dev/shm: the write works, the host's is untouched
    assert probe["/proc/sys/kernel/hostname"] == "Read-only file system"
    assert probe["/sys/hermes-probe"] == "Read-only file system"


def test_only_the_envs_own_processes_count_as_left_running() -> None:
    # A kit sandbox shell being torn down as the env closes (an allow-listed environment, no mark) was reported as
    # the env's leftover process, failing HC903 on the example env now and then.
    from hermes_envs.conformance._contained import _MARK, _leftover_processes

    marked = subprocess.Popen(["sleep", "60"], env={**os.environ, _MARK: "1"})
    kit_like = subprocess.Popen(["sleep", "61"], env={"PATH": os.environ["PATH"]})
    try:
        pids = {pid for pid, _ in _leftover_processes(grace=0)}
        assert marked.pid in pids and kit_like.pid not in pids
    finally:
        for proc in (marked, kit_like):
            proc.kill()
            proc.wait()


def test_a_kit_sandbox_process_is_never_the_envs_leftover_even_with_the_mark() -> None:
    # On the local backend a sandbox shell gets the variables the process set since it started, the worker's mark
    # among them: a shell still being killed as the env closed failed HC903 on file_task_env now and then (the demo
    # test). The kit's sandbox processes carry HERMES_SANDBOX_ID; one that ends within the grace is not reported.
    from hermes_envs.conformance._contained import _MARK, _leftover_processes

    shell = subprocess.Popen(["sleep", "62"], env={**os.environ, _MARK: "1", "HERMES_SANDBOX_ID": "ab12"})
    ending = subprocess.Popen(["sleep", "0.2"], env={**os.environ, _MARK: "1"})
    env_own = subprocess.Popen(["sleep", "63"], env={**os.environ, _MARK: "1"})
    try:
        pids = {pid for pid, _ in _leftover_processes(grace=3)}
        assert pids >= {env_own.pid} and not pids & {shell.pid, ending.pid}
    finally:
        for proc in (shell, ending, env_own):
            proc.kill()
            proc.wait()


AS_NOBODY = """
import json, os, sys
from hermes_envs.conformance._container import run_contained

def make(path):
    def run(fd, kit_tmp):
        open(path, "w").write("x")
        os.write(fd, (json.dumps({"ev": "probe", "pid": os.getpid()}) + "\\n").encode())
    return run

import __main__
__main__.make = make
result = run_contained("__main__:make", [sys.argv[1]])
print(json.dumps({"events": result.events, "changed": [c.path for c in result.changed], "why": result.unavailable}))
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists(), reason="needs root and setpriv"
)
def test_without_root_the_container_is_made_in_a_user_namespace() -> None:
    target = f"/tmp/hermes-contain-nobody-{uuid.uuid4().hex[:8]}.txt"
    argv = [
        "/usr/bin/setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        sys.executable,
        "-c",
        AS_NOBODY,
    ]
    done = subprocess.run([*argv, target], capture_output=True, text=True, timeout=120, cwd="/", env={
        **os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    if "Permission denied" in done.stderr or "No module named 'hermes_envs'" in done.stderr:
        # (a checkout under a private folder, e.g. one made by `mktemp -d`, mode 700)
        pytest.skip("this checkout is not readable by an unprivileged user")
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["why"] == "" and [e["pid"] for e in seen["events"]] == [
        2
    ]  # contained: PID 2 of its namespace
    assert target in seen["changed"] and not Path(target).exists()


def test_an_env_that_ends_its_process_at_import_fails_the_first_check(tmp_path: Path) -> None:
    # Before, no check was running when the process ended: every check was reported as not run, and the run passed.
    from hermes_envs.conformance._runner import run_conformance
    from hermes_envs.conformance._settings import Settings

    checkout, env_file = _env(tmp_path, module="\nimport os as _os\n_os._exit(0)\n")
    report = run_conformance([str(env_file)], Settings(select=["HC101", "HC201", "HC903"]))
    assert report.failed
    first, later = report.envs[0].outcomes[:2]
    assert first.check_id == "HC101" and first.status.value == "failed"
    message = first.findings[0].message
    assert "os._exit(0) at hostile_env.py:" in message and "during import" in message
    assert later.status.value == "skipped" and "os._exit(0)" in later.note


@pytest.mark.slow
def test_an_env_that_hangs_is_stopped_and_the_check_that_ran_names_the_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before, a reward that never returned kept `hermes-envs check` (and a CI job) waiting forever.
    from hermes_envs.conformance._runner import run_conformance
    from hermes_envs.conformance._settings import Settings

    marker = f"hang-{uuid.uuid4().hex[:8]}"
    reward = f"        import subprocess, time\n        subprocess.Popen(['sleep', '3600', '{marker}'])\n"
    reward += "        while True:\n            time.sleep(0.5)\n"
    checkout, env_file = _env(tmp_path, reward=reward)
    monkeypatch.chdir(checkout)
    # (only HC401 selected: on a loaded machine the import alone may outlast the short hang_seconds, and then the
    # check that was pending is the one that names the hang, as it should)
    report = run_conformance([str(env_file)], Settings(select=["HC401"], hang_seconds=10))
    (outcome,) = [o for o in report.envs[0].outcomes if o.check_id == "HC401"]
    (finding,) = outcome.findings
    assert "made no progress for 10 s" in finding.message and "hang_seconds" in finding.fix
    assert not _running(marker)  # the namespace ended with the run: the reward's sleep too


def test_a_clean_env_reads_no_credential_by_the_kit_and_its_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # TOKENIZERS_PARALLELISM (read by the tokenizer libraries while the env is built) was taken for a credential:
    # "TOKEN" matched inside "TOKENIZERS", and every env got an HC903 warning for a read it never made
    from hermes_envs.conformance._runner import run_conformance
    from hermes_envs.conformance._settings import Settings

    checkout, env_file = _env(tmp_path, reward="        os.environ.get('HF_TOKEN')\n", module="\nimport os\n")
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    report = run_conformance([str(env_file)], Settings(select=["HC401", "HC903"]))
    (outcome,) = [o for o in report.envs[0].outcomes if o.check_id == "HC903"]
    subjects = {f.subject for f in outcome.findings}
    assert "TOKENIZERS_PARALLELISM" not in subjects and "HF_TOKEN" in subjects, outcome.findings
