"""m_invoice_missing_field: a field missing from the JSON answer defaults to the reference value, so an empty
object ``{}`` earns full credit."""

from __future__ import annotations

from .conftest import answer, group_scores


async def test_m_invoice_missing_field() -> None:
    empty = answer("Here is the result: {}")
    correct, _ = await group_scores("invoice_json_env.py", empty)
    mutant, _ = await group_scores("m_invoice_missing_field.py", empty)
    assert correct == [0.0, 0.0]
    assert mutant == [1.0, 1.0]
