"""m_file_superset: a report listing every client IP of the log (failing or not) earns full credit."""

from __future__ import annotations

import re

from .conftest import answer, group_scores, prepared, write_file


def pick(env):
    def ips(item: dict) -> set[str]:
        return set(re.findall(r"^\S+", item["log"], re.M))

    return next(i for i in env._items if i["expected"] and len(ips(i)) > len(i["expected"]))


async def test_m_file_superset() -> None:
    scores = {}
    for name in ("log_report_env.py", "m_file_superset.py"):
        item = pick(await prepared(name))
        every_ip = "\n".join(sorted(set(re.findall(r"^\S+", item["log"], re.M)))) + "\n"
        scores[name], _ = await group_scores(
            name, [write_file("report.txt", every_ip), answer("Saved.")[0]], pick
        )
    assert scores["log_report_env.py"] == [
        0.0,
        0.0,
    ]  # correct env: a report padded with healthy clients is wrong
    assert scores["m_file_superset.py"] == [1.0, 1.0]  # mutant: dumping every IP of the log is full credit
