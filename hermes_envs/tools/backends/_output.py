"""The capped output of one command: the first and last bytes are kept, the cut in the middle is stated."""

from __future__ import annotations

__all__ = ["CappedOutput"]


class CappedOutput:
    """Keeps the first ``cap // 2`` and last ``cap - cap // 2`` bytes of a stream and counts what was dropped."""

    def __init__(self, cap: int):
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def text(self) -> tuple[str, int]:
        """(the text to show, the number of bytes dropped from the middle)."""
        if len(self.tail) > self.tail_cap:
            del self.tail[: len(self.tail) - self.tail_cap]
        dropped = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", errors="replace")
        if dropped <= 0:
            return head + self.tail.decode("utf-8", errors="replace"), 0
        tail = self.tail.decode("utf-8", errors="replace")
        note = (
            f"\n\n[... output truncated: {dropped} of {self.total} bytes omitted from the middle; "
            f"the first {len(self.head)} and last {len(self.tail)} bytes are shown. "
            "Redirect to a file and read parts of it (head, tail, grep) to see more ...]\n\n"
        )
        return head + note + tail, dropped
