"""Entry point (`xdsl.universe`) through which stock `xdsl-opt` sees our dialects and passes.

Factories import lazily so that loading the plugin costs nothing until a dialect
or pass is asked for.
"""

from xdsl.ir import Dialect
from xdsl.universe import Universe


def _tmem() -> Dialect:
    from xdsl_tmem.dialects.tmem import Tmem

    return Tmem


def _nvvm() -> Dialect:
    from xdsl_tmem.dialects.nvvm import NVVM

    return NVVM


TMEM_UNIVERSE = Universe(
    all_dialects={"tmem": _tmem, "nvvm": _nvvm},
    all_passes={},
    all_targets={},
)
