"""A fake OpenAI-compatible model server for testing environments offline.

>>> from hermes_envs.testing.fake_server import FakeOpenAIServer
>>> with FakeOpenAIServer(script=[{"content": "hi"}]) as srv:  # doctest: +SKIP
...     srv.base_url
'http://127.0.0.1:PORT/v1'

See docs/fake-server.md for the script schema, policies, faults and fixtures.
"""

from __future__ import annotations

from ._faults import FAULT_KINDS, Fault, parse_fault
from ._policies import POLICIES, args_from_schema, get_policy, register_policy
from ._records import Call
from ._server import FakeOpenAIServer
from ._tool_call import ToolCall
from ._turns import Match, Script, Turn, load_script

__all__ = [
    "Call",
    "FAULT_KINDS",
    "FakeOpenAIServer",
    "Fault",
    "Match",
    "POLICIES",
    "Script",
    "ToolCall",
    "Turn",
    "args_from_schema",
    "get_policy",
    "load_script",
    "parse_fault",
    "register_policy",
]
