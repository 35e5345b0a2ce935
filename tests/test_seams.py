"""Every third-party internal we touch (hermes_envs._seams) still exists in the installed versions: an upgrade that
removes one fails here, naming the seam and the code that uses it, instead of silently changing behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs._seams import SEAMS, Seam, resolve

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("seam", SEAMS, ids=lambda s: s.target)
def test_the_seam_exists_in_the_installed_versions(seam: Seam) -> None:
    obj = resolve(seam)
    if seam.instance_attr:
        instance = obj()
        try:
            assert hasattr(instance, seam.instance_attr), f"{seam.target} instances lost {seam.instance_attr}"
        finally:
            getattr(instance, "shutdown", lambda: None)()


@pytest.mark.parametrize("seam", SEAMS, ids=lambda s: s.target)
def test_the_seam_is_used_where_the_table_says(seam: Seam) -> None:
    # A seam removed from the code leaves the table; a stale row would hide where the next one is.
    leaf = seam.marker or seam.target.replace(":", ".").split(".")[-1]
    files = [part.strip().split(" ")[0] for part in seam.used_in.split(",")]
    assert any(leaf in (ROOT / f).read_text() for f in files), f"{leaf} is not used in {seam.used_in}"


def test_retry_objects_are_found_on_atroposlib_server_classes() -> None:
    from hermes_envs.testing.retries import _retry_objects

    assert _retry_objects(), (
        "fast_retries() would find no tenacity object: tests against failing fakes get slow"
    )
