"""Temporary: the module moves into this package (next commit splits it by family)."""

from xdsl_tmem.dialects.tmem.stage import *  # noqa: F403
