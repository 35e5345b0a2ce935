"""``Item``: the type of an env author's dataset items in the base env's signatures.

An item is whatever the author's ``get_next_item`` (or eval set) yields: a dict, a dataclass, a str. Its type is
the author's, so the base class takes ``Any`` (``object`` would make every typed override of ``format_prompt`` or
``compute_reward`` an error); the alias says that is the reason.
"""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["Item"]

#: One dataset item of the env author's choosing.
Item: TypeAlias = Any
