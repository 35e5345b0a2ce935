"""syrupy extensions that pin what an env does: its rewards (with a tolerance) and its transcripts (normalized).

``assert rewards == reward_snapshot`` (fixture) compares per-item rewards with the absolute tolerance written in the
snapshot file itself (``tolerance: 1e-06`` on its first line; edit it there to loosen one snapshot, or pick a
default with ``snapshot.use_extension(RewardSnapshotExtension.with_tolerance(0.01))``). Refresh with
``pytest --snapshot-update``, which keeps a tolerance edited in the file (unless the extension was given one in
code with ``with_tolerance``, which then wins). A changed reward fails with a line diff such as::

    - item 0: 1 1
    + item 0: 0.1 0.1

``assert transcripts == transcript_snapshot`` stores JSON with the volatile parts normalized (tool-call ids become
``call_1``, ``call_2`` ... by first appearance; UUIDs, ISO timestamps, epoch ``created`` fields, temporary folders
and durations are replaced by placeholders), so a replayed run gives the same file every time.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    from syrupy.data import Snapshot, SnapshotCollection
    from syrupy.extensions.json import JSONSnapshotExtension
    from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
except (
    ImportError
) as missing:  # an extra: syrupy's pytest plugin would cost every pytest run (pyproject.toml)
    raise ImportError(
        "hermes_envs.testing.snapshots needs syrupy, which hermes-envs installs only with its snapshots extra. "
        "Fix: pip install 'hermes-envs[snapshots]' (or pip install syrupy)."
    ) from missing

from hermes_envs.errors import ArgumentTypeError

__all__ = [
    "RewardSnapshotExtension",
    "TranscriptSnapshotExtension",
    "format_rewards",
    "normalize_transcript",
    "parse_rewards",
]

_HEADER = "# hermes-envs reward snapshot: one line per item; values compared within the tolerance below"


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = f"{x:.10g}"
    return text


def _rows(data: Any) -> list[tuple[str, list[float]]]:
    """Rewards as ``[(label, [values])]``: a list of floats (one per item), a list of lists (per item, per
    rollout), a mapping label -> float or list, or a RolloutRun (its ``rewards``)."""
    data = getattr(data, "rewards", data)
    if isinstance(data, Mapping):
        items = [(str(k), v) for k, v in data.items()]
    elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        items = [(f"item {i}", v) for i, v in enumerate(data)]
    else:
        raise ArgumentTypeError(
            f"rewards should be a list (per item) or a mapping of floats or lists of floats; got {type(data).__name__}. "
            "Fix: pass the list of scores (or the ScoredDataGroup) instead."
        )
    rows = []
    for label, value in items:
        values = (
            list(value) if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) else [value]
        )
        rows.append((label, [float(v) for v in values]))
    return rows


def format_rewards(data: Any, tolerance: float) -> str:
    """The snapshot text for ``data`` (see :func:`_rows` for accepted shapes)."""
    lines = [_HEADER, f"tolerance: {tolerance:g}"]
    lines.extend(f"{label}: {' '.join(_fmt(v) for v in values)}" for label, values in _rows(data))
    return "\n".join(lines) + "\n"


def parse_rewards(text: str) -> tuple[float | None, list[tuple[str, list[float]]]]:
    """``(tolerance, rows)`` of a reward snapshot text."""
    tolerance: float | None = None
    rows: list[tuple[str, list[float]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        label, _, rest = line.rpartition(":")
        if label == "tolerance" and tolerance is None and not rows:
            tolerance = float(rest)
            continue
        try:
            rows.append((label.strip(), [float(v) for v in rest.split()]))
        except ValueError:
            rows.append((line, []))
    return tolerance, rows


_TOLERANCE_LINE = re.compile(r"^tolerance:.*$", re.M)


def _stored_tolerance_line(path: str) -> str | None:
    """The ``tolerance: ...`` line of an existing reward snapshot file, if there is one."""
    try:
        match = _TOLERANCE_LINE.search(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return match.group(0).strip() if match else None


def _close(a: float, b: float, tol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= tol


class RewardSnapshotExtension(SingleFileSnapshotExtension):
    """Per-item rewards, compared with the tolerance stored in the snapshot (``.rewards`` files)."""

    _write_mode = WriteMode.TEXT
    file_extension = "rewards"
    tolerance: float = 1e-6

    @classmethod
    def with_tolerance(cls, tolerance: float) -> type[RewardSnapshotExtension]:
        """A subclass whose new snapshots are written with ``tolerance``."""
        return type(f"RewardSnapshotExtension_{tolerance:g}", (cls,), {"tolerance": float(tolerance)})

    def serialize(self, data: Any, **kwargs: Any) -> str:
        if isinstance(data, str):  # already serialized (syrupy passes snapshot text back in for diffs)
            return data
        return format_rewards(data, self.tolerance)

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: SnapshotCollection, name_order: dict[str, int] | None = None
    ) -> None:
        """Write, keeping a tolerance the author edited in the file: ``--snapshot-update`` refreshes the rewards,
        not the tolerance (an extension made ``with_tolerance`` in code writes its own)."""
        kept = None
        if cls.tolerance == RewardSnapshotExtension.tolerance:
            kept = _stored_tolerance_line(snapshot_collection.location)
        if kept is not None:
            updated = SnapshotCollection(location=snapshot_collection.location)
            for snap in snapshot_collection:
                data = snap.data
                if isinstance(data, str):
                    data = _TOLERANCE_LINE.sub(lambda _: kept, data, count=1)
                updated.add(Snapshot(name=snap.name, data=data, tainted=snap.tainted))
            snapshot_collection = updated
        super().write_snapshot_collection(snapshot_collection=snapshot_collection, name_order=name_order)

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        if not isinstance(serialized_data, str) or not isinstance(snapshot_data, str):
            return bool(serialized_data == snapshot_data)
        tolerance, stored = parse_rewards(snapshot_data)
        _, got = parse_rewards(serialized_data)
        tol = self.tolerance if tolerance is None else tolerance
        if [label for label, _ in stored] != [label for label, _ in got]:
            return False
        for (_, want), (_, have) in zip(stored, got):
            if len(want) != len(have) or not all(_close(a, b, tol) for a, b in zip(have, want)):
                return False
        return True


# ------------------------------------------------------------------------------------------------ transcripts
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_ISO_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b")
_TMP_PATH = re.compile(r"(?:/private)?/(?:tmp|var/folders)/[^\s'\"]*")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b")
_VOLATILE_KEYS = {"created", "timestamp", "system_fingerprint", "request_id", "duration", "elapsed"}


def normalize_transcript(data: Any) -> Any:
    """A copy of ``data`` (messages, transcripts, a RolloutRun) with volatile values replaced by placeholders."""
    data = getattr(data, "transcripts", data)
    ids: dict[str, str] = {}

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for k, v in value.items():
                if k == "tool_call_id" or (k == "id" and key == "tool_calls"):
                    out[k] = ids.setdefault(str(v), f"call_{len(ids) + 1}")
                elif k in _VOLATILE_KEYS and v is not None:
                    out[k] = f"<{k}>"
                else:
                    out[k] = walk(v, k)
            return out
        if isinstance(value, (list, tuple)):
            return [walk(v, key) for v in value]
        if isinstance(value, str):
            text = _UUID.sub("<uuid>", value)
            text = _ISO_TIME.sub("<time>", text)
            text = _TMP_PATH.sub("<tmp>", text)
            return _DURATION.sub("<duration>", text)
        return value

    return walk(data)


class TranscriptSnapshotExtension(JSONSnapshotExtension):
    """Transcripts as JSON with ids, timestamps and other volatile fields normalized (``.transcript.json``)."""

    file_extension = "transcript.json"

    def serialize(self, data: Any, **kwargs: Any) -> str:
        if isinstance(data, str):
            return data
        return json.dumps(normalize_transcript(data), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
