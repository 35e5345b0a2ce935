"""HC106: the file has no `__main__` block, so `python no_main_block.py process` silently does nothing."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC106"]


class NoMainEnv(LetterCountEnv):
    name = "no-main-block"
