"""CuTe DSL tcgen05 GEMM, 1-CTA (cta_group 1, no cluster): see _gemm.py. 6 output tiles of 128x128
over 2 persistent CTAs, 3 K tiles of 64: both the A/B ring (2 stages) and the accumulator ring
(2 stages) wrap."""

import _gemm
import cute_build

M, N, K = 256, 384, 192
TILER = (128, 128, 64)
CTAS = 2


def build():
    gemm, args = _gemm.build(1, M, N, K, TILER, CTAS)
    return cute_build.build(
        gemm, args, lambda: _gemm.params(gemm, M, N, K), **_gemm.sidecar_fields(gemm, M, N, K, __file__)
    )
