"""Triton GEMM through host TMA descriptors with a warp-specialised K loop:
c[M, N] (f32) = a[M, K] (f16) @ b[N, K]^T (f16). `b` is stored N x K (K contiguous), so both
operands are K-major boxes; the epilogue stores through a third descriptor."""

import triton
import triton.language as tl

M, N, K = 256, 128, 256
BM, BN, BK = 128, 64, 64
GRID = [(M // BM) * (N // BN), 1, 1]


@triton.jit
def gemm_tma_ws(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tiles_n = c_desc.shape[1] // BN
    pid = tl.program_id(0)
    row0 = (pid // tiles_n) * BM
    col0 = (pid % tiles_n) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        a = a_desc.load([row0, k])
        b = b_desc.load([col0, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([row0, col0], acc)


def build():
    from triton_build import Const, Desc, Scalar, build

    return build(
        gemm_tma_ws,
        {
            "a_desc": Desc("a", "fp16", (BM, BK)),
            "b_desc": Desc("b", "fp16", (BN, BK)),
            "c_desc": Desc("c", "fp32", (BM, BN)),
            "K": Scalar(K, "reduction length"),
            "BM": Const(BM),
            "BN": Const(BN),
            "BK": Const(BK),
        },
        source=__file__,
        tensors={
            "a": ("float16", [M, K], "rand:1"),
            "b": ("float16", [N, K], "rand:2"),
            "c": ("float32", [M, N], "zeros"),
        },
        grid=GRID,
        expected={"c": "a.astype(np.float32) @ b.astype(np.float32).T"},
        tolerance={"c": 1e-3},
        exercises=["host TensorDescriptor (byval CUtensorMap)", "tl.range(warp_specialize=True)"],
    )
