"""Triton elementwise kernel: out = x * scale + y.to(f32), masked tail (n is not a block multiple)."""

import triton
import triton.language as tl

N = 1000
BLOCK = 256
GRID = [triton.cdiv(N, BLOCK), 1, 1]


@triton.jit
def axpy_f16(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offsets < n
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    y = tl.load(y_ptr + offsets, mask=in_bounds).to(tl.float32)
    tl.store(out_ptr + offsets, x * scale + y, mask=in_bounds)


def build():
    from triton_build import Const, Ptr, Scalar, build

    return build(
        axpy_f16,
        {
            "x_ptr": Ptr("x", "fp32"),
            "y_ptr": Ptr("y", "fp16"),
            "out_ptr": Ptr("out", "fp32"),
            "n": Scalar(N, "number of elements"),
            "scale": Scalar(3, "scale factor (an integer scalar, multiplied after conversion to f32)"),
            "BLOCK": Const(BLOCK),
        },
        source=__file__,
        tensors={"x": ("float32", [N], "rand:1"), "y": ("float16", [N], "rand:2"), "out": ("float32", [N], "zeros")},
        grid=GRID,
        # The kernel fuses `x * scale + y` into one `fma.rn.f32` (one rounding; FP fusion is
        # Triton's default): float64 holds x * 3 + y exactly, so rounding it once to float32 is
        # the fused result, where `x * np.float32(3) + y` (two roundings) is off by an ulp.
        expected={"out": "(x.astype(np.float64) * 3 + y.astype(np.float64)).astype(np.float32)"},
        tolerance={"out": 0.0},
        exercises=["ld.global/st.global with predicates", "cvt f16->f32", "fma"],
    )
