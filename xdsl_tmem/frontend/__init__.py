"""The PTX front end: PTX text in, the `ptx` dialect out (docs/ptx-frontend.md)."""

from xdsl_tmem.frontend.parser import load_ptx, parse_ptx

__all__ = ["load_ptx", "parse_ptx"]
