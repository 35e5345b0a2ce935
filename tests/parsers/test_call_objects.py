"""The call objects a parse returns are built without running pydantic's validation on the three strings: they must
be the same objects validation builds, in everything a user can do with them."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from hermes_envs.parsers import _calls
from hermes_envs.parsers._calls import _same, _validated_call, make_tool_call


def test_the_direct_build_is_in_use_with_this_pydantic():
    assert _calls._DIRECT  # else every call is validated (correct, only slower)


@settings(max_examples=200, deadline=None)
@given(name=st.text(max_size=20), arguments=st.text(max_size=40), call_id=st.text(min_size=1, max_size=30))
def test_a_built_call_is_the_validated_call(name, arguments, call_id):
    built, validated = make_tool_call(name, arguments, call_id), _validated_call(name, arguments, call_id)
    assert _same(built, validated)
    assert built.model_dump() == validated.model_dump() and built.to_dict() == validated.to_dict()
    assert _same(pickle.loads(pickle.dumps(built)), validated) and _same(copy.deepcopy(built), validated)
    assert _same(built.model_copy(update={"id": "x"}), validated.model_copy(update={"id": "x"}))
    built.function.name = validated.function.name = "renamed"  # the objects stay mutable the same way
    assert _same(built, validated)


def test_a_call_id_that_is_not_a_string_is_still_refused_by_validation():
    with pytest.raises(ValidationError):
        make_tool_call("f", "{}", 12)  # type: ignore[arg-type]
    assert make_tool_call("f", "{}").id.startswith("call_")
