"""HC503: the `__main__` block was copied from the guide and names a class this file does not define."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC503"]


class CopiedMainEnv(LetterCountEnv):
    name = "main-calls-other-class"


if __name__ == "__main__":
    MyCustomEnv.cli()  # noqa: F821 - the mistake under test
