"""Triton GEMM with pointer loads: c[M, N] (f32) = a[M, K] (f16) @ b[K, N] (f16), a `tl.dot` K loop
accumulating in f32. M, N, K are run-time scalars; the tiles divide them (no masks)."""

import triton
import triton.language as tl

M, N, K = 256, 128, 128
BM, BN, BK = 128, 64, 32
GRID = [(M // BM) * (N // BN), 1, 1]


@triton.jit
def gemm_dot(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tiles_n = N // BN
    pid = tl.program_id(0)
    row0 = (pid // tiles_n) * BM
    col0 = (pid % tiles_n) * BN
    rows = row0 + tl.arange(0, BM)
    cols = col0 + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a_tile = a_ptr + rows[:, None] * K + ks[None, :]
    b_tile = b_ptr + ks[:, None] * N + cols[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a_tile), tl.load(b_tile), acc)
        a_tile += BK
        b_tile += BK * N
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)


def build():
    from triton_build import Const, Ptr, Scalar, build

    return build(
        gemm_dot,
        {
            "a_ptr": Ptr("a", "fp16"),
            "b_ptr": Ptr("b", "fp16"),
            "c_ptr": Ptr("c", "fp32"),
            "M": Scalar(M, "rows of a and c"),
            "N": Scalar(N, "columns of b and c"),
            "K": Scalar(K, "columns of a, rows of b"),
            "BM": Const(BM),
            "BN": Const(BN),
            "BK": Const(BK),
        },
        source=__file__,
        tensors={
            "a": ("float16", [M, K], "rand:1"),
            "b": ("float16", [K, N], "rand:2"),
            "c": ("float32", [M, N], "zeros"),
        },
        grid=GRID,
        expected={"c": "a.astype(np.float32) @ b.astype(np.float32)"},
        tolerance={"c": 1e-3},
        exercises=["tl.dot K loop", "software pipelining (num_stages=3)"],
    )
