"""Temporary: the module moves into this package (next commit splits it by family)."""

from xdsl_tmem.dialects.nvvm.tcgen05 import *  # noqa: F403
