"""A planted-secrets corpus for the secret lint and the cassette redaction: fake credentials of every shape we know,
in the forms they take inside a cassette, and prose that looks a little like them and must not be flagged.

Every value is generated here from a seeded RNG (so this file holds no key-shaped literal, and no value is a real
credential). ``python tests/recording/secret_corpus.py`` prints the detection and false-positive figures.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64URL = B62 + "-_"
UPPER32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Planted:
    """A secret ``value`` placed in ``text`` (a cassette excerpt); ``body`` is how a provider response carries it."""

    name: str
    value: str
    text: str
    body: str | None = None  # a response body holding the secret (for redaction); None: not a body form


class _Gen:
    def __init__(self, seed: int = 20261201) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        while True:
            out = "".join(self.rng.choice(alphabet) for _ in range(n))
            if not any(c.isalpha() for c in alphabet):
                return out
            if alphabet in (HEX, UPPER32):
                if any(c.isdigit() for c in out) and any(c.isalpha() for c in out):
                    return out
            elif (
                any(c.isupper() for c in out)
                and any(c.islower() for c in out)
                and any(c.isdigit() for c in out)
            ):
                return out


def _yaml_body(value: str, key: str = "content") -> str:
    return f"      body:\n        string:\n          json:\n            {key}: 'result {value} end'\n"


def _json_body(value: str) -> str:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": f"the key is {value} ok"}}]})


def _sse_split(value: str, cut: int) -> str:
    chunks = [f"the key is {value[:cut]}", f"{value[cut:]} ok"]
    events = [{"choices": [{"index": 0, "delta": {"content": c}}]} for c in chunks]
    return "".join("data: " + json.dumps(e) + "\n\n" for e in events) + "data: [DONE]\n\n"


def secrets() -> list[Planted]:
    """30+ fake secrets in the forms a cassette holds them."""
    g = _Gen()
    shapes = {
        "OpenAI project key": "sk-proj-" + g.s(B64URL, 40) + "T3BlbkFJ" + g.s(B64URL, 40),
        "OpenAI legacy key": "sk-" + g.s(B62, 48),
        "OpenAI service-account key": "sk-svcacct-" + g.s(B64URL, 60),
        "OpenRouter key": "sk-or-v1-" + g.s(HEX, 64),
        "Anthropic key": "sk-ant-api03-" + g.s(B64URL, 93) + "AA",
        "xAI key": "xai-" + g.s(B62, 80),
        "Hugging Face token": "hf_" + g.s(B62, 34),
        "Groq key": "gsk_" + g.s(B62, 52),
        "Google API key": "AIza" + g.s(B64URL, 35),
        "GitHub classic token": "ghp_" + g.s(B62, 36),
        "GitHub fine-grained token": "github_pat_" + g.s(B62, 22) + "_" + g.s(B62, 59),
        "Slack bot token": "xoxb-" + g.s("0123456789", 12) + "-" + g.s("0123456789", 13) + "-" + g.s(B62, 24),
        "Replicate token": "r8_" + g.s(B62, 37),
        "Fireworks key": "fw_" + g.s(B62, 24),
        "Perplexity key": "pplx-" + g.s(B62, 48),
        "Stripe secret key": "sk_live_" + g.s(B62, 99),
        "Stripe restricted key": "rk_live_" + g.s(B62, 99),
        "GitLab token": "glpat-" + g.s(B64URL, 20),
        "npm token": "npm_" + g.s(B62, 36),
        "SendGrid key": "SG." + g.s(B64URL, 22) + "." + g.s(B64URL, 43),
        "AWS access key id": "AKIA" + g.s(UPPER32, 16),
        "JSON web token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        + base64.urlsafe_b64encode(json.dumps({"sub": g.s(B62, 12)}).encode()).decode().rstrip("=")
        + "."
        + g.s(B64URL, 43),
    }
    out = [Planted(name, v, _yaml_body(v), _json_body(v)) for name, v in shapes.items()]

    # Credentials without a distinctive prefix: recognised by the name they are written under.
    aws_secret = g.s(B62 + "+/", 40)
    azure = g.s(HEX, 32)
    mistral = g.s(B62, 32)
    together = g.s(HEX, 64)
    out += [
        Planted(
            "AWS secret access key",
            aws_secret,
            f"            aws_secret_access_key: {aws_secret}\n",
            json.dumps(
                {"Credentials": {"AccessKeyId": "ASIA" + g.s(UPPER32, 16), "SecretAccessKey": aws_secret}}
            ),
        ),
        Planted(
            "Azure OpenAI key",
            azure,
            f"    - 'AZURE_OPENAI_API_KEY={azure}'\n",
            json.dumps({"api-key": azure}),
        ),
        Planted(
            "Mistral key",
            mistral,
            f"            content: 'export MISTRAL_API_KEY=\"{mistral}\"'\n",
            json.dumps({"content": f"MISTRAL_API_KEY={mistral}"}),
        ),
        Planted(
            "Together key",
            together,
            f"            together_api_key: {together}\n",
            json.dumps({"together_api_key": together}),
        ),
    ]
    password = g.s(B62, 16)
    url = f"postgresql://trainer:{password}@db.internal.example:5432/rollouts"
    out.append(
        Planted("user:password URL", password, f"            content: 'connect to {url}'\n", _json_body(url))
    )
    pem_body = "\n".join(g.s(B62 + "+/", 64) for _ in range(4))
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----"
    pem_yaml = "            content: |\n" + "".join(f"              {line}\n" for line in pem.splitlines())
    out.append(Planted("PEM private key", pem_body.splitlines()[0], pem_yaml, _json_body(pem)))

    # Decoded forms: the key itself is not in the text, an encoding of it is.
    key = "sk-proj-" + g.s(B64URL, 48)
    b64 = base64.b64encode(f"OPENAI_API_KEY={key}".encode()).decode()
    out.append(Planted("base64-encoded key", key, f"            content: {b64}\n", _json_body(b64)))
    key = "xai-" + g.s(B62, 80)
    escaped = "".join(f"\\x{ord(c):02x}" if i % 3 == 0 else c for i, c in enumerate(key))
    out.append(Planted("YAML-escaped key", key, f'            content: "{escaped}"\n'))
    key = "gsk_" + g.s(B62, 52)
    split = f'            content: "the key {key[:20]}\\\n              {key[20:]} here"\n'
    out.append(Planted("YAML-split key", key, split))
    key = "sk-ant-api03-" + g.s(B64URL, 93) + "AA"
    sse = [
        {"choices": [{"index": 0, "delta": {"content": "the key is " + key[:30]}}]},
        {"choices": [{"index": 0, "delta": {"content": key[30:] + " ok"}}]},
    ]
    sse_yaml = "        string:\n          sse:\n" + "".join(f"          - {json.dumps(e)}\n" for e in sse)
    out.append(Planted("SSE-split key", key, sse_yaml, _sse_split(key, 30)))
    key = "sk-" + g.s(B62, 48)
    out.append(Planted("URL-encoded key", key, f"    uri: https://x.example/cb?state=k%3D{key}\n", None))
    return out


def redaction_cases() -> list[Planted]:
    """The body forms (plain, SSE streamed across chunks, base64) a provider response may carry a secret in."""
    return [p for p in secrets() if p.body is not None] + [p for p in _extra_bodies()]


def _extra_bodies() -> list[Planted]:
    g = _Gen(7)
    key = "hf_" + g.s(B62, 34)
    return [Planted("SSE-split token", key, "", _sse_split(key, 9))]


def prose() -> list[str]:
    """Text a cassette legitimately holds that resembles a credential and must not be flagged."""
    g = _Gen(99)
    return [
        "use sk-learn-preprocessing-standard-scaler-pipeline for the features",
        "the sk-learn-model-selection-train-test-split-helper works",
        "AKIAPOLYNESIANISLAND is a made-up word",
        "AKIAEXAMPLEKEYEXAMPL appears in docs",
        "set OPENAI_API_KEY=sk-your-key-here-0123456789 first",
        "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "authorization: Bearer REDACTED",
        "api_key: REDACTED",
        "xai-grok-model-release-notes-for-developers-2025",
        "accounts/fireworks/models/llama-v3p1-70b-instruct and fw_accounts_models_listing",
        "hf_hub_download_from_the_huggingface_repository",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
        "sha256:" + g.s(HEX, 64),
        "request id " + "-".join(g.s(HEX, n) for n in (8, 4, 4, 4, 12)),
        "call_" + g.s(B62, 24),
        "chatcmpl-" + g.s(B62, 29),
        "SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgdGVzdCBtZXNzYWdlLg==",
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "postgresql://localhost:5432/rollouts and https://user@example.com/path",
        "postgres://trainer:${DB_PASSWORD}@db:5432/x",
        "-----BEGIN PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----",
        "aws_secret_access_key: ${AWS_SECRET_ACCESS_KEY}",
        "MISTRAL_API_KEY=<your key>",
        "the answer is 35736; 12345678901234567890 tokens; ghp_ prefixes GitHub tokens",
        "sk_live_ and rk_live_ prefix Stripe keys",
        "token_count: 1234, total_tokens: 5678, password_reset_required: false",
    ]


def figures() -> dict[str, tuple[int, int]]:
    """``{"lint": (found, planted), "prose": (flagged, total), "redaction": (held, planted)}``."""
    from hermes_envs.testing import Redactor, lint_text

    planted = secrets()
    found = sum(1 for p in planted if lint_text(p.text, environ={}))
    texts = prose()
    flagged = sum(1 for t in texts if lint_text(t, environ={}))
    cases = redaction_cases()
    held = sum(1 for p in cases if not exposed(p.value, redact(Redactor(environ={}), p.body or "")))
    return {"lint": (found, len(planted)), "prose": (flagged, len(texts)), "redaction": (held, len(cases))}


def redact(redactor: object, body: str) -> str:
    """The body as it would be stored: through the redactor's response hook."""
    content_type = "text/event-stream" if body.startswith("data: ") else "application/json"
    response = {
        "status": {"code": 200},
        "headers": {"Content-Type": [content_type]},
        "body": {"string": body.encode()},
    }
    out = redactor.response(response)["body"]["string"]  # type: ignore[attr-defined]
    return out.decode() if isinstance(out, bytes) else str(out)


def exposed(secret: str, stored: str) -> bool:
    """True when ``secret`` (or any 16 characters of it) can be read back from ``stored``: as is, in the joined SSE
    stream, or base64-decoded."""
    import re

    forms = [stored]
    if stored.startswith("data: "):
        joined = []
        for block in stored.split("\n\n"):
            if block.startswith("data: {"):
                for choice in json.loads(block[6:]).get("choices") or []:
                    joined.append((choice.get("delta") or {}).get("content") or "")
        forms.append("".join(joined))
    for run in re.findall(r"[A-Za-z0-9+/=]{16,}", stored):
        try:
            forms.append(base64.b64decode(run + "=" * (-len(run) % 4)).decode("utf-8", "replace"))
        except ValueError:
            pass
    try:
        forms.append(json.dumps(json.loads(stored)))
    except ValueError:
        pass
    windows = {secret[i : i + 16] for i in range(0, max(1, len(secret) - 15))}
    return any(w in f for f in forms for w in windows)


if __name__ == "__main__":
    for name, (a, b) in figures().items():
        print(f"{name}: {a}/{b}")
