"""A provider in another process (tests/recording/provider.py) that needs a fake secret key."""

from __future__ import annotations

import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PROVIDER = Path(__file__).with_name("provider.py")


@dataclass
class ProviderProcess:
    url: str
    key: str
    proc: subprocess.Popen

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def start_provider(key: str, *extra: str) -> ProviderProcess:
    proc = subprocess.Popen(
        [sys.executable, str(PROVIDER), "--key", key, *extra], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"provider did not start: {url!r}")
    return ProviderProcess(url, key, proc)


def fake_key() -> str:
    """An OpenAI-shaped key that exists nowhere else (so finding it on disk means it leaked)."""
    return "sk-hermes" + secrets.token_hex(20)


class ProviderFactory:
    """Start providers in other processes (``.start(key, *extra_args)``) and make fake keys (``.fake_key()``)."""

    start = staticmethod(start_provider)
    fake_key = staticmethod(fake_key)


@pytest.fixture(scope="session")
def providers() -> ProviderFactory:
    return ProviderFactory()


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderProcess]:
    key = fake_key()
    monkeypatch.setenv("HERMES_TEST_PROVIDER_API_KEY", key)
    p = start_provider(key)
    try:
        yield p
    finally:
        p.stop()


@pytest.fixture(scope="session")
def corpus() -> object:
    """The planted-secrets corpus (tests/recording/secret_corpus.py) as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "secret_corpus", Path(__file__).with_name("secret_corpus.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("secret_corpus", module)  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def no_client_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai client's own waits between its retries (0.5 s doubling, up to 8 s) become zero for the test.

    A recording keeps every retry layer on (the client's two, atroposlib's three), so a request that fails for good
    is sent 27 times with about 12 s of waiting in between. A test that records against a server failing on purpose
    asserts what the failure leaves behind, not how long the client backs off: it still makes every attempt, only
    without the sleeps. openai reads these two module constants at each retry and has no public setting for them.
    """
    import openai._base_client as client_base

    monkeypatch.setattr(client_base, "INITIAL_RETRY_DELAY", 0.0)
    monkeypatch.setattr(client_base, "MAX_RETRY_DELAY", 0.0)
