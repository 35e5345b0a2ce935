"""m_numeric_signed_tol: the tolerance is REL_TOL * reference without abs(), so for a negative reference it falls
to the 1e-6 floor: a negative answer is credited only when exact to 1e-6, i.e. a third of the items are almost
unreachable."""

from __future__ import annotations

from .conftest import answer, group_scores, prepared


def negative(env):
    return next(i for i in env._items if i["answer"] < -1)


def positive(env):
    return next(i for i in env._items if i["answer"] > 1)


async def test_m_numeric_signed_tol() -> None:
    env = await prepared("numeric_tolerance_env.py")
    neg, pos = negative(env)["answer"], positive(env)["answer"]
    for name, expected_negative in (("numeric_tolerance_env.py", 1.0), ("m_numeric_signed_tol.py", 0.0)):
        close_neg, _ = await group_scores(name, answer(f"Answer: {neg * 1.003:.3f}"), negative)
        close_pos, _ = await group_scores(name, answer(f"Answer: {pos * 1.003:.3f}"), positive)
        assert close_pos == [1.0, 1.0], name
        assert close_neg == [expected_negative] * 2, name
