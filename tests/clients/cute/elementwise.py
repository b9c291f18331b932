"""CuTe DSL elementwise kernel: out[i] = x[i] * 2 + f32(y[i]), one element per thread, static shapes."""

import cute_build
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

N = 1024
THREADS = 128


@cute.kernel
def scale_add_kernel(gx: cute.Tensor, gy: cute.Tensor, gout: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    gout[i] = gx[i] * cutlass.Float32(2.0) + gy[i].to(cutlass.Float32)


@cute.jit
def scale_add(x: cute.Tensor, y: cute.Tensor, out: cute.Tensor):
    scale_add_kernel(x, y, out).launch(grid=[N // THREADS, 1, 1], block=[THREADS, 1, 1], smem=0)


def build():
    x = make_fake_compact_tensor(cutlass.Float32, (N,), assumed_align=16)
    y = make_fake_compact_tensor(cutlass.Float16, (N,), assumed_align=16)
    out = make_fake_compact_tensor(cutlass.Float32, (N,), assumed_align=16)
    return cute_build.build(
        scale_add,
        [x, y, out],
        [cute_build.PtrStruct("x"), cute_build.PtrStruct("y"), cute_build.PtrStruct("out")],
        source=__file__,
        tensors={"x": ("float32", [N], "rand:1"), "y": ("float16", [N], "rand:2"), "out": ("float32", [N], "zeros")},
        expected={"out": "x * np.float32(2) + y.astype(np.float32)"},
        tolerance={"out": 0.0},
        exercises=["byval tensor structs", "cvt f16->f32", "fma"],
    )
