"""hermes_envs._text: the one shortening rule every message and table uses."""

from __future__ import annotations

from hermes_envs._text import clip, exception_text, quoted, short_repr, shorten


def test_shorten_fits_the_limit_with_the_marker():
    assert shorten("abcdef", 6) == "abcdef"
    assert shorten("abcdefg", 6) == "abc..."
    assert shorten("abcdefg", 4, marker="…") == "abc…"
    assert len(shorten("x" * 1000, 90)) == 90


def test_clip_keeps_the_start_and_can_count_the_rest():
    assert clip("abc", 3) == "abc"
    assert clip("abcdef", 3) == "abc..."
    assert clip("a" * 2500, 2000, count=True) == "a" * 2000 + "... [500 more characters]"


def test_short_repr_and_quoted():
    assert short_repr({"k": "v" * 50}, 12) == "{'k': 'vv..."
    assert quoted("x" * 100, 10) == "'xxxxxxx...'"  # cut first, then quoted: the closing quote survives
    assert quoted([1, 2, 3], 60) == "[1, 2, 3]"


def test_exception_text_survives_a_broken_str():
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert exception_text(ValueError("bad x"), 2000) == "bad x"
    assert exception_text(Broken(), 2000) == repr(Broken)
    assert exception_text(ValueError("y" * 30), 10) == "y" * 10 + "... [20 more characters]"


def test_where_names_module_and_qualname():
    from hermes_envs._definitions import where

    assert where(test_where_names_module_and_qualname) == f"{__name__}.test_where_names_module_and_qualname"
    assert where(3) == "3"  # no qualified name: its repr
