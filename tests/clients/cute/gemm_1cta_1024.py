"""CuTe DSL tcgen05 GEMM, 1-CTA, at 1024x1024x1024 (issue 14's speed target; benchmarks/client_gemms.py):
the kernel of gemm_1cta.py (see _gemm.py) built for this shape, which the DSL compiles in (the fake
tensors' shapes are static, so the tile counts and strides are PTX immediates). 64 output tiles of
128x128 over 16 persistent CTAs (4 each), 16 K tiles of 64."""

import _gemm
import cute_build

M, N, K = 1024, 1024, 1024
TILER = (128, 128, 64)
CTAS = 16


def build():
    gemm, args = _gemm.build(1, M, N, K, TILER, CTAS)
    return cute_build.build(
        gemm, args, lambda: _gemm.params(gemm, M, N, K), **_gemm.sidecar_fields(gemm, M, N, K, __file__)
    )
