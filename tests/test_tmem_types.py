"""tmem types: parameters follow the spec's rules, both when built in Python and parsed.

Each property states the rule from the spec independently (docs/ptx-nvvm.md §1.3 for the
column counts, docs/semantics.md §4.1/§9 for the stage configuration) and checks that
construction, parsing and printing agree with it.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, f16, f32, i32
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from xdsl_tmem.dialects.tmem import (
    AllocationType,
    EpilogueWarpContextType,
    MmaWarpContextType,
    OutputRingType,
    TensorType,
    Tmem,
    TmemStageType,
)

VALID_COLUMNS = {32, 64, 128, 256, 512}


def context() -> Context:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Tmem)
    return ctx


def parse_type(text: str) -> Attribute:
    return Parser(context(), text).parse_type()


def roundtrips(t: Attribute) -> bool:
    return parse_type(str(t)) == t


@given(st.integers(-1, 3), st.integers(0, 1100))
def test_allocation_rule(cta_group: int, cols: int) -> None:
    valid = cta_group in (1, 2) and cols in VALID_COLUMNS
    text = f"!tmem.allocation<{cta_group}, {cols}>"
    if valid:
        t = AllocationType(cta_group, cols)
        assert str(t) == text
        assert roundtrips(t)
    else:
        with pytest.raises(VerifyException):
            AllocationType(cta_group, cols)
        with pytest.raises(ParseError):
            parse_type(text)


@given(st.integers(0, 9), st.integers(0, 600), st.integers(0, 3))
def test_stage_config_rule(num_stages: int, stride: int, cta_group: int) -> None:
    valid = num_stages >= 1 and stride > 0 and cta_group in (1, 2) and num_stages * stride <= 512
    for cls, name in ((TmemStageType, "tmem_stage"), (OutputRingType, "output_ring")):
        text = f"!tmem.{name}<{num_stages}, {stride}, {cta_group}>"
        if valid:
            assert roundtrips(cls(num_stages, stride, cta_group))
        else:
            with pytest.raises(ParseError):
                parse_type(text)


@given(
    st.integers(1, 4),
    st.sampled_from([64, 128, 256]),
    st.sampled_from([1, 2]),
    st.sampled_from([0, 16, 32, 96, 128]),
    st.sampled_from([32, 64, 128, 256, 512]),
    st.sampled_from([None, 64, 128, 256, 512]),
)
def test_warp_context_rule(
    num_stages: int, stride: int, cta_group: int, mma: int, epilogue: int, max_cols: int | None
) -> None:
    cols = 512 if max_cols is None else max_cols
    valid = num_stages * stride <= cols and mma >= 32 and mma % 32 == 0 and mma + epilogue <= 1024
    suffix = "" if max_cols is None else f", {max_cols}"
    for cls, name in (
        (MmaWarpContextType, "mma_warp_context"),
        (EpilogueWarpContextType, "epilogue_warp_context"),
    ):
        text = f"!tmem.{name}<{num_stages}, {stride}, {cta_group}, {mma}, {epilogue}{suffix}>"
        if valid:
            t = parse_type(text)
            assert isinstance(t, cls)
            # The default 512 columns is not printed.
            printed_suffix = "" if cols == 512 else f", {cols}"
            assert str(t) == f"!tmem.{name}<{num_stages}, {stride}, {cta_group}, {mma}, {epilogue}{printed_suffix}>"
            assert roundtrips(t)
        else:
            with pytest.raises(ParseError):
                parse_type(text)


@given(
    st.sampled_from([32, 64, 96, 128, 256]),
    st.integers(0, 600),
    st.sampled_from([1, 2]),
    st.sampled_from([f32, i32, f16]),
)
def test_tensor_rule(m: int, n: int, cta_group: int, element: Attribute) -> None:
    valid_m = {1: (64, 128), 2: (128, 256)}[cta_group]
    valid = m in valid_m and 1 <= n <= 512 and element in (f32, i32)
    text = f"!tmem.tensor<{m}x{n}x{element}, {cta_group}>"
    if valid:
        t = TensorType(m, n, element, cta_group)
        assert str(t) == text
        assert roundtrips(t)
        # Mojo TmemTensor.is_lower_required = not (cta_group == 1 and M == 64)
        assert t.is_lower_required == (not (cta_group == 1 and m == 64))
    else:
        with pytest.raises(ParseError):
            parse_type(text)


def test_type_errors_are_located() -> None:
    with pytest.raises(ParseError) as info:
        Parser(context(), "!tmem.allocation<1, 48>", "t.mlir").parse_type()
    assert info.value.span.get_location().col == len("!tmem.allocation") + 1
    assert "max_cols must be a power of two in [32, 512], got 48" in info.value.msg
