"""Triton persistent GEMM: a fixed number of programs walk the output tiles, the tile loop
warp-specialised and flattened with its K loop: c[M, N] (f32) = a[M, K] (f16) @ b[N, K]^T (f16)
through host TMA descriptors. More tiles than programs, so every program does several."""

import triton
import triton.language as tl

M, N, K = 256, 256, 128
BM, BN, BK = 128, 64, 64
PROGRAMS = 3
GRID = [PROGRAMS, 1, 1]


@triton.jit
def gemm_persistent_ws(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    steps = tl.cdiv(K, BK)
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), flatten=True, warp_specialize=True):
        row0 = (tile // tiles_n) * BM
        col0 = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for step in range(steps):
            a = a_desc.load([row0, step * BK])
            b = b_desc.load([col0, step * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([row0, col0], acc)


def build():
    from triton_build import Const, Desc, Scalar, build

    return build(
        gemm_persistent_ws,
        {
            "a_desc": Desc("a", "fp16", (BM, BK)),
            "b_desc": Desc("b", "fp16", (BN, BK)),
            "c_desc": Desc("c", "fp32", (BM, BN)),
            "M": Scalar(M, "rows of a and c"),
            "N": Scalar(N, "columns of c, rows of b"),
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
        exercises=["persistent tile loop", "tl.range(flatten=True, warp_specialize=True)", "host TensorDescriptor"],
    )
