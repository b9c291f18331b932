"""CuTe DSL tcgen05 GEMM, 2-CTA (cluster 2x1x1), at 1024x1024x1024 (issue 14's speed target;
benchmarks/client_gemms.py): the kernel of gemm_2cta.py (see _gemm.py) built for this shape, which
the DSL compiles in. 32 output tiles of 256x128 over 8 persistent CTA pairs (4 each), 16 K tiles of 64."""

import _gemm
import cute_build

M, N, K = 1024, 1024, 1024
TILER = (256, 128, 64)
CTAS = 16


def build():
    gemm, args = _gemm.build(2, M, N, K, TILER, CTAS)
    return cute_build.build(
        gemm, args, lambda: _gemm.params(gemm, M, N, K), **_gemm.sidecar_fields(gemm, M, N, K, __file__)
    )
