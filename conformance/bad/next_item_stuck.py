"""HC203: get_next_item never increments its position, so every step trains on the same item."""

from __future__ import annotations

from _arith import ArithBase

EXPECTED_FINDINGS = ["HC203"]


class ArithEnv(ArithBase):
    async def get_next_item(self):
        return self.train[self.pos % len(self.train)]


if __name__ == "__main__":
    ArithEnv.cli()
