"""Value semantics of PTX instructions over warp lane arrays (docs/ptx-semantics.md)."""

from .base import LANE_DTYPE, Lanes, Semantics, UnsupportedInstruction
from .semantics import OPCODES, decode, semantics

__all__ = ["LANE_DTYPE", "OPCODES", "Lanes", "Semantics", "UnsupportedInstruction", "decode", "semantics"]
