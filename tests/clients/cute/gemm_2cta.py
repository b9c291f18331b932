"""CuTe DSL tcgen05 GEMM, 2-CTA (cta_group 2, cluster 2x1x1): see _gemm.py. The CTA pair computes
256x128 tiles (each CTA holds 128 rows in its TMEM, loads its half of A and of B, the leader issues
the MMAs); 3 tiles for one cluster, 3 K tiles of 64: both rings wrap."""

import _gemm
import cute_build

M, N, K = 256, 384, 192
TILER = (256, 128, 64)
CTAS = 2


def build():
    gemm, args = _gemm.build(2, M, N, K, TILER, CTAS)
    return cute_build.build(
        gemm, args, lambda: _gemm.params(gemm, M, N, K), **_gemm.sidecar_fields(gemm, M, N, K, __file__)
    )
