"""Who runs where: elect.sync, mapa and the `read.ptx.sreg.*` special registers."""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import (
    I32,
    IntAttr,
    IntegerType,
    i1,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from xdsl_tmem.dialects.llvm_ext import ConstantRangeAttr
from xdsl_tmem.dialects.nvvm.base import NVVMOp, address_space, check_int_type, check_pointer, pointer_name
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.traits import (
    LaneVarying,
    UniformPreserving,
    UniformResult,
    WarpLocal,
)


@irdl_op_definition
class ElectSyncOp(NVVMOp):
    """`elect.sync _|p, membermask;` (membermask defaults to all lanes)."""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.elect.sync"
    membermask = opt_operand_def(I32)
    pred = result_def(IntegerType)  # i1, checked in verify_nvvm
    assembly_format = "($membermask^)? attr-dict `->` type($pred)"

    def __init__(self, membermask: SSAValue | None = None):
        super().__init__(operands=[membermask], result_types=[i1])

    def verify_nvvm(self) -> None:
        check_int_type(self, "the result", self.pred, 1)


@irdl_op_definition
class MapaOp(NVVMOp):
    """`mapa[.shared::cluster].u32|u64 d, a, b;`: the address of `a` in CTA `b`."""

    traits = traits_def(WarpLocal(), UniformPreserving())

    name = "nvvm.mapa"
    a = operand_def(LLVMPointerType)
    b = operand_def(I32)
    res = result_def(LLVMPointerType)
    assembly_format = "$a `,` $b attr-dict `:` type($a) `->` type($res)"

    def __init__(self, a: SSAValue, b: SSAValue):
        space = address_space(a.type)
        result = LLVMPointerType(IntAttr(7)) if space == 3 else LLVMPointerType()
        super().__init__(operands=[a, b], result_types=[result])

    def verify_nvvm(self) -> None:
        space = check_pointer(self, "a", self.a, (0, 3))
        expected = 7 if space == 3 else 0
        if address_space(self.res.type) != expected:
            raise self.error(
                f"result must be {pointer_name(expected)} for a {pointer_name(space)} operand, got {self.res.type}"
            )


# --------------------------------------------------------------------------------------
# Special registers: nvvm.read.ptx.sreg.*
# --------------------------------------------------------------------------------------


class SpecialRegisterOp(NVVMOp, ABC):
    """`mov.u32 %r, %<sreg>;`. Upstream allows any LLVM type; an integer is the
    only meaningful one, so that is what we accept."""

    res = result_def(IntegerType)
    assembly_format = "attr-dict `:` type($res)"

    PREFIX: ClassVar[str] = "nvvm.read.ptx.sreg."

    def __init__(self, result_type: IntegerType = i32):
        super().__init__(result_types=[result_type])

    @classmethod
    def special_register(cls) -> tuple[str, int | None]:
        """The register the op reads, from its name (the one place it is stated), as
        (register, axis): `...sreg.cluster.ctaid.y` is ("cluster.ctaid", 1),
        `...sreg.laneid` is ("laneid", None)."""
        register = cls.name.removeprefix(cls.PREFIX)
        base, _, axis = register.rpartition(".")
        return (base, "xyz".index(axis)) if axis in ("x", "y", "z") else (register, None)

    @classmethod
    def ptx_register(cls) -> str:
        """PTX's spelling (PTX ISA, "Special Registers"): dots inside the name become
        underscores, `%cluster_ctaid.y`, `%lanemask_eq`."""
        register, axis = cls.special_register()
        return "%" + register.replace(".", "_") + ("" if axis is None else "." + "xyz"[axis])


class _RangeSregOp(SpecialRegisterOp, ABC):
    """A special register with an optional `range <iN, lower, upper>` (LLVM `range`
    return attribute on the intrinsic call)."""

    range = opt_prop_def(ConstantRangeAttr)
    traits = traits_def(Pure())
    assembly_format = "(`range` $range^)? attr-dict `:` type($res)"

    def __init__(self, result_type: IntegerType = i32, range: tuple[int, int] | None = None):
        super().__init__(result_type)
        if range is not None:
            self.properties["range"] = ConstantRangeAttr(result_type, *range)

    def verify_nvvm(self) -> None:
        if self.range is not None and self.range.int_type != self.res.type:
            # LLVM verifier: "Attribute 'range(i64 0, 160)' applied to incompatible type!"
            raise self.error(f"range type {self.range.int_type} must match the result type {self.res.type}")


class _PureSregOp(SpecialRegisterOp, ABC):
    traits = traits_def(Pure())


@irdl_op_definition
class LaneIdOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.laneid"


@irdl_op_definition
class WarpSizeOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.warpsize"


@irdl_op_definition
class WarpIdOp(_RangeSregOp):
    """`%warpid`: the volatile hardware warp slot, not tid.x / 32 (docs/ptx-nvvm.md §1.2)."""

    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.warpid"


@irdl_op_definition
class WarpDimOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nwarpid"


@irdl_op_definition
class SmIdOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.smid"


@irdl_op_definition
class SmDimOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nsmid"


@irdl_op_definition
class GridIdOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.gridid"


@irdl_op_definition
class ThreadIdXOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.tid.x"


@irdl_op_definition
class ThreadIdYOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.tid.y"


@irdl_op_definition
class ThreadIdZOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.tid.z"


@irdl_op_definition
class BlockDimXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ntid.x"


@irdl_op_definition
class BlockDimYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ntid.y"


@irdl_op_definition
class BlockDimZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ntid.z"


@irdl_op_definition
class BlockIdXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ctaid.x"


@irdl_op_definition
class BlockIdYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ctaid.y"


@irdl_op_definition
class BlockIdZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ctaid.z"


@irdl_op_definition
class GridDimXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nctaid.x"


@irdl_op_definition
class GridDimYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nctaid.y"


@irdl_op_definition
class GridDimZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nctaid.z"


@irdl_op_definition
class ClusterIdXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.clusterid.x"


@irdl_op_definition
class ClusterIdYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.clusterid.y"


@irdl_op_definition
class ClusterIdZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.clusterid.z"


@irdl_op_definition
class ClusterDimXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nclusterid.x"


@irdl_op_definition
class ClusterDimYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nclusterid.y"


@irdl_op_definition
class ClusterDimZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nclusterid.z"


@irdl_op_definition
class BlockInClusterIdXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.ctaid.x"


@irdl_op_definition
class BlockInClusterIdYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.ctaid.y"


@irdl_op_definition
class BlockInClusterIdZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.ctaid.z"


@irdl_op_definition
class ClusterDimBlocksXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.nctaid.x"


@irdl_op_definition
class ClusterDimBlocksYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.nctaid.y"


@irdl_op_definition
class ClusterDimBlocksZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.nctaid.z"


@irdl_op_definition
class ClusterCtaRankOp(_RangeSregOp):
    """`%cluster_ctarank`: this CTA's rank in its cluster (bit index of commit masks)."""

    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.ctarank"


@irdl_op_definition
class ClusterNctaRankOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.nctarank"


@irdl_op_definition
class LaneMaskEqOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.eq"


@irdl_op_definition
class LaneMaskLeOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.le"


@irdl_op_definition
class LaneMaskLtOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.lt"


@irdl_op_definition
class LaneMaskGeOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.ge"


@irdl_op_definition
class LaneMaskGtOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.gt"


@irdl_op_definition
class ClockOp(SpecialRegisterOp):
    """`%clock` (not pure: every read differs)."""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.read.ptx.sreg.clock"


@irdl_op_definition
class Clock64Op(SpecialRegisterOp):
    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.read.ptx.sreg.clock64"

    def __init__(self, result_type: IntegerType = i64):
        super().__init__(result_type)


@irdl_op_definition
class GlobalTimerOp(SpecialRegisterOp):
    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.read.ptx.sreg.globaltimer"

    def __init__(self, result_type: IntegerType = i64):
        super().__init__(result_type)
