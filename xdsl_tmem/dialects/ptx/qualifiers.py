"""Typed PTX qualifiers: instruction types, rounding and integer modes, comparison
operators, state spaces and memory-ordering semantics, as xDSL enum attributes.

Where the nvvm dialect already has an enum for the same PTX qualifier it is reused
(`.cta_group::N`, `.kind::K`, `.collector::a::C`, the tcgen05 shapes, `.scope`, the
`fence.proxy` kinds, `bar.red`'s operation); this module holds the rest. Every
instruction's mnemonic is derived from these; the verifier helpers at the end state one
PTX ISA rule per check and name the op, the bad value and what is allowed.

Rules are cited by the PTX ISA 9.0 chapter and instruction name (section numbers move
between ISA versions); each is also checked against ptxas in
`tests/test_ptx_backend.py::test_ptx_verifier_agrees_with_ptxas`.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import AnyFloat, IntegerAttr, IntegerType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from xdsl_tmem.dialects.ptx.base import ImmOp, RegisterType

# --------------------------------------------------------------------------------------
# Fundamental types (PTX ISA 9.0, "Fundamental Types")
# --------------------------------------------------------------------------------------


class PtxType(StrEnum):
    """An instruction type: `.pred`, `.bN`, `.uN`, `.sN`, `.f16`, `.bf16`, `.f32`, `.f64`."""

    PRED = "pred"
    B8 = "b8"
    B16 = "b16"
    B32 = "b32"
    B64 = "b64"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    S8 = "s8"
    S16 = "s16"
    S32 = "s32"
    S64 = "s64"
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"

    @property
    def width(self) -> int:
        return 1 if self is PtxType.PRED else int(self.value.lstrip("bfsu"))

    @property
    def is_float(self) -> bool:
        return self.value.startswith(("f", "bf"))

    @property
    def is_bits(self) -> bool:
        return self.value.startswith("b") and not self.is_float

    @property
    def is_signed(self) -> bool:
        return self.value.startswith("s")

    @property
    def is_unsigned(self) -> bool:
        return self.value.startswith("u")

    @property
    def is_integer(self) -> bool:
        """`.uN` or `.sN` (the integer-arithmetic types; `.bN` is untyped bits)."""
        return self.is_signed or self.is_unsigned

    @property
    def register_kind(self) -> str:
        """The `.reg` class that holds a value of this type (8-bit values live in `.b16`)."""
        if self is PtxType.PRED:
            return "pred"
        return f"b{max(self.width, 16)}"

    @staticmethod
    def of(letter: str, width: int) -> PtxType:
        """`PtxType.of("s", 32)` is `.s32`; `of("f", 16)` is `.f16`."""
        return PtxType(f"{letter}{width}")


@irdl_attr_definition
class PtxTypeAttr(EnumAttribute[PtxType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.type"


def spell(values: Iterable[StrEnum]) -> str:
    """`.u16/.u32/...`: a set of qualifiers as PTX spells them, for messages."""
    return "/".join(f".{v.value}" for v in values)


def types(*names: str) -> frozenset[PtxType]:
    return frozenset(PtxType(n) for n in names)


INTEGER_TYPES = types("u16", "u32", "u64", "s16", "s32", "s64")
FLOAT_TYPES = types("f16", "bf16", "f32", "f64")
BIT_TYPES = types("b16", "b32", "b64")
LOGIC_TYPES = types("pred", "b16", "b32", "b64")

# --------------------------------------------------------------------------------------
# Instruction modifiers
# --------------------------------------------------------------------------------------


class IntMode(StrEnum):
    """`mul`/`mad` on integers: which half of the double-width product (`.lo`, `.hi`),
    or all of it (`.wide`)."""

    LO = "lo"
    HI = "hi"
    WIDE = "wide"


@irdl_attr_definition
class IntModeAttr(EnumAttribute[IntMode], SpacedOpaqueSyntaxAttribute):
    name = "ptx.int_mode"


class Rounding(StrEnum):
    """Rounding modifiers: `.rn .rz .rm .rp` round a float result to a float, `.rni .rzi
    .rmi .rpi` round it to an integral value (PTX ISA 9.0, cvt "Rounding modifiers")."""

    RN = "rn"
    RZ = "rz"
    RM = "rm"
    RP = "rp"
    RNI = "rni"
    RZI = "rzi"
    RMI = "rmi"
    RPI = "rpi"

    @property
    def integral(self) -> bool:
        return self.value.endswith("i")


FLOAT_ROUNDING = frozenset(r for r in Rounding if not r.integral)
INTEGER_ROUNDING = frozenset(r for r in Rounding if r.integral)


@irdl_attr_definition
class RoundingAttr(EnumAttribute[Rounding], SpacedOpaqueSyntaxAttribute):
    name = "ptx.rounding"


class DivPrecision(StrEnum):
    """`div.approx.f32` / `div.full.f32`: the non-IEEE single-precision divisions."""

    APPROX = "approx"
    FULL = "full"


@irdl_attr_definition
class DivPrecisionAttr(EnumAttribute[DivPrecision], SpacedOpaqueSyntaxAttribute):
    name = "ptx.div_precision"


class CmpOp(StrEnum):
    """`setp` comparison operators (PTX ISA 9.0, Comparison and Selection Instructions:
    setp, "Operators for signed/unsigned integer, bit-size and floating-point types")."""

    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    LO = "lo"
    LS = "ls"
    HI = "hi"
    HS = "hs"
    EQU = "equ"
    NEU = "neu"
    LTU = "ltu"
    LEU = "leu"
    GTU = "gtu"
    GEU = "geu"
    NUM = "num"
    NAN = "nan"

    def allowed_for(self, type: PtxType) -> bool:
        """Bit-size types compare `eq`/`ne` only; `lo ls hi hs` are unsigned only; the
        unordered `equ ... geu` and `num`/`nan` are floating-point only."""
        if self in (CmpOp.EQ, CmpOp.NE):
            return True
        if type.is_bits:
            return False
        if self in (CmpOp.LT, CmpOp.LE, CmpOp.GT, CmpOp.GE):
            return True
        if self in (CmpOp.LO, CmpOp.LS, CmpOp.HI, CmpOp.HS):
            return type.is_unsigned
        return type.is_float


@irdl_attr_definition
class CmpOpAttr(EnumAttribute[CmpOp], SpacedOpaqueSyntaxAttribute):
    name = "ptx.cmp"


class BoolOp(StrEnum):
    """`setp`'s combining operator `.BoolOp` (PTX ISA 9.0, Comparison and Selection
    Instructions: setp, `.BoolOp = { .and, .or, .xor }`)."""

    AND = "and"
    OR = "or"
    XOR = "xor"


@irdl_attr_definition
class BoolOpAttr(EnumAttribute[BoolOp], SpacedOpaqueSyntaxAttribute):
    name = "ptx.bool_op"


class VectorLanes(StrEnum):
    """How many parts a packed `mov` operand has: `{a, b}` or `{a, b, c, d}`."""

    V2 = "v2"
    V4 = "v4"

    @property
    def parts(self) -> int:
        return int(self.value[1:])


@irdl_attr_definition
class VectorLanesAttr(EnumAttribute[VectorLanes], SpacedOpaqueSyntaxAttribute):
    name = "ptx.lanes"


# --------------------------------------------------------------------------------------
# State spaces and memory ordering
# --------------------------------------------------------------------------------------


class StateSpace(StrEnum):
    """A state space qualifier (PTX ISA 9.0, "State Spaces"); the generic space is the
    absence of one (an instruction's optional `space` property)."""

    GLOBAL = "global"
    LOCAL = "local"
    SHARED = "shared"
    SHARED_CTA = "shared::cta"
    SHARED_CLUSTER = "shared::cluster"
    CONST = "const"
    PARAM = "param"
    PARAM_ENTRY = "param::entry"
    PARAM_FUNC = "param::func"


@irdl_attr_definition
class StateSpaceAttr(EnumAttribute[StateSpace], SpacedOpaqueSyntaxAttribute):
    name = "ptx.space"


SHARED_CTA_SPACES = frozenset((StateSpace.SHARED, StateSpace.SHARED_CTA))
SHARED_SPACES = frozenset((*SHARED_CTA_SPACES, StateSpace.SHARED_CLUSTER))


class MemSemantic(StrEnum):
    """`.sem`: the memory-ordering semantics of fences, barriers and mbarrier operations."""

    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"
    SC = "sc"


@irdl_attr_definition
class MemSemanticAttr(EnumAttribute[MemSemantic], SpacedOpaqueSyntaxAttribute):
    name = "ptx.sem"


class AtomicOperation(StrEnum):
    """`atom`/`red`'s `.op` (`atom.cas` is its own op: it takes a third operand)."""

    AND = "and"
    OR = "or"
    XOR = "xor"
    EXCH = "exch"
    ADD = "add"
    INC = "inc"
    DEC = "dec"
    MIN = "min"
    MAX = "max"


@irdl_attr_definition
class AtomicOperationAttr(EnumAttribute[AtomicOperation], SpacedOpaqueSyntaxAttribute):
    name = "ptx.atomic_op"


class AtomicType(StrEnum):
    """The `PtxType`s an `atom`/`red` may name (its own enum so that the recognizer
    enumerates 8 types, not all 17, for each of the many qualifier combinations)."""

    B32 = "b32"
    B64 = "b64"
    U32 = "u32"
    S32 = "s32"
    U64 = "u64"
    S64 = "s64"
    F32 = "f32"
    F64 = "f64"

    @property
    def ptx(self) -> PtxType:
        return PtxType(self.value)


@irdl_attr_definition
class AtomicTypeAttr(EnumAttribute[AtomicType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.atomic_type"


class AtomicSpace(StrEnum):
    """The state spaces an `atom`/`red` may name (absent: generic); its own enum for the
    same reason as `AtomicType`."""

    GLOBAL = "global"
    SHARED = "shared"
    SHARED_CTA = "shared::cta"
    SHARED_CLUSTER = "shared::cluster"

    @property
    def state_space(self) -> StateSpace:
        return StateSpace(self.value)


@irdl_attr_definition
class AtomicSpaceAttr(EnumAttribute[AtomicSpace], SpacedOpaqueSyntaxAttribute):
    name = "ptx.atomic_space"


class MbarrierWaitKind(StrEnum):
    """`mbarrier.try_wait` (may suspend) or `mbarrier.test_wait` (never does)."""

    TRY_WAIT = "try_wait"
    TEST_WAIT = "test_wait"


@irdl_attr_definition
class MbarrierWaitKindAttr(EnumAttribute[MbarrierWaitKind], SpacedOpaqueSyntaxAttribute):
    name = "ptx.mbarrier_wait"


class MbarrierTxKind(StrEnum):
    """`mbarrier.expect_tx` / `mbarrier.complete_tx`: the transaction-count updates."""

    EXPECT_TX = "expect_tx"
    COMPLETE_TX = "complete_tx"


@irdl_attr_definition
class MbarrierTxKindAttr(EnumAttribute[MbarrierTxKind], SpacedOpaqueSyntaxAttribute):
    name = "ptx.mbarrier_tx"


class BarrierClusterKind(StrEnum):
    ARRIVE = "arrive"
    WAIT = "wait"


@irdl_attr_definition
class BarrierClusterKindAttr(EnumAttribute[BarrierClusterKind], SpacedOpaqueSyntaxAttribute):
    name = "ptx.barrier_cluster"


# ---- bit-field, permute and funnel-shift instructions (PTX ISA 9.0, Integer Arithmetic /
# Logic and Shift / Data Movement: bfe bfi brev clz popc bfind prmt shf). The semantics'
# decoders (xdsl_tmem/interpreter/ptx/integer.py) read these same sets.

BFE_TYPES = types("u32", "s32", "u64", "s64")
BFI_TYPES = types("b32", "b64")
BREV_TYPES = types("b32", "b64")
POPC_CLZ_TYPES = types("b32", "b64")
BFIND_TYPES = types("u32", "s32", "u64", "s64")


class PrmtMode(StrEnum):
    """`prmt.b32.mode`: the byte-selection modes besides the default (generic) one."""

    F4E = "f4e"
    B4E = "b4e"
    RC8 = "rc8"
    ECL = "ecl"
    ECR = "ecr"
    RC16 = "rc16"


@irdl_attr_definition
class PrmtModeAttr(EnumAttribute[PrmtMode], SpacedOpaqueSyntaxAttribute):
    name = "ptx.prmt_mode"


class ShfDirection(StrEnum):
    """`shf.l` / `shf.r`: funnel shift left or right."""

    L = "l"
    R = "r"


@irdl_attr_definition
class ShfDirectionAttr(EnumAttribute[ShfDirection], SpacedOpaqueSyntaxAttribute):
    name = "ptx.shf_direction"


class ShfMode(StrEnum):
    """`shf`'s shift amount: clamped to 32 or taken modulo 32 (required)."""

    CLAMP = "clamp"
    WRAP = "wrap"


@irdl_attr_definition
class ShfModeAttr(EnumAttribute[ShfMode], SpacedOpaqueSyntaxAttribute):
    name = "ptx.shf_mode"


# ---- warp-level and miscellaneous instructions ---------------------------------------------


class BarrierKind(StrEnum):
    """`barrier.sync` (arrive and wait) or `barrier.arrive` (arrive only)."""

    SYNC = "sync"
    ARRIVE = "arrive"


@irdl_attr_definition
class BarrierKindAttr(EnumAttribute[BarrierKind], SpacedOpaqueSyntaxAttribute):
    name = "ptx.barrier_kind"


class SetmaxnregAction(StrEnum):
    """`setmaxnreg.inc` (request registers) or `.dec` (release them)."""

    INC = "inc"
    DEC = "dec"


@irdl_attr_definition
class SetmaxnregActionAttr(EnumAttribute[SetmaxnregAction], SpacedOpaqueSyntaxAttribute):
    name = "ptx.setmaxnreg_action"


class ShflMode(StrEnum):
    """`shfl.sync` modes: which lane a thread reads from."""

    UP = "up"
    DOWN = "down"
    BFLY = "bfly"
    IDX = "idx"


@irdl_attr_definition
class ShflModeAttr(EnumAttribute[ShflMode], SpacedOpaqueSyntaxAttribute):
    name = "ptx.shfl_mode"


class VoteMode(StrEnum):
    """`vote.sync` modes: `.all .any .uni` reduce to a predicate, `.ballot` to a `.b32` mask."""

    ALL = "all"
    ANY = "any"
    UNI = "uni"
    BALLOT = "ballot"


@irdl_attr_definition
class VoteModeAttr(EnumAttribute[VoteMode], SpacedOpaqueSyntaxAttribute):
    name = "ptx.vote_mode"


class ReduxKind(StrEnum):
    """`redux.sync` operations: `.add .min .max` on `.u32/.s32`, `.and .or .xor` on `.b32`."""

    ADD = "add"
    MIN = "min"
    MAX = "max"
    AND = "and"
    OR = "or"
    XOR = "xor"


@irdl_attr_definition
class ReduxKindAttr(EnumAttribute[ReduxKind], SpacedOpaqueSyntaxAttribute):
    name = "ptx.redux_kind"


class MatchMode(StrEnum):
    """`match.any.sync` (the lanes holding the same value) / `match.all.sync` (all or none)."""

    ANY = "any"
    ALL = "all"


@irdl_attr_definition
class MatchModeAttr(EnumAttribute[MatchMode], SpacedOpaqueSyntaxAttribute):
    name = "ptx.match_mode"


class CacheLevel(StrEnum):
    """`prefetch`'s cache level (`.L1`, `.L2`)."""

    L1 = "L1"
    L2 = "L2"


@irdl_attr_definition
class CacheLevelAttr(EnumAttribute[CacheLevel], SpacedOpaqueSyntaxAttribute):
    name = "ptx.cache_level"


class CacheOperator(StrEnum):
    """`cp.async`'s cache operator: `.ca` (cache at all levels) or `.cg` (L2 only)."""

    CA = "ca"
    CG = "cg"


@irdl_attr_definition
class CacheOperatorAttr(EnumAttribute[CacheOperator], SpacedOpaqueSyntaxAttribute):
    name = "ptx.cache_operator"


class BulkTensorDirection(StrEnum):
    """`cp.async.bulk.tensor`'s `.dst.src`: a tensor tile loaded from global memory into
    this CTA's or a cluster's shared memory, or stored from shared to global memory."""

    TO_SHARED_CTA = "shared::cta.global"
    TO_SHARED_CLUSTER = "shared::cluster.global"
    TO_GLOBAL = "global.shared::cta"

    @property
    def load(self) -> bool:
        return self is not BulkTensorDirection.TO_GLOBAL


@irdl_attr_definition
class BulkTensorDirectionAttr(EnumAttribute[BulkTensorDirection], SpacedOpaqueSyntaxAttribute):
    name = "ptx.bulk_tensor_direction"


class TestpKind(StrEnum):
    """`testp`'s test (PTX ISA 9.0, Floating-Point Instructions: testp)."""

    FINITE = "finite"
    INFINITE = "infinite"
    NUMBER = "number"
    NOTANUMBER = "notanumber"
    NORMAL = "normal"
    SUBNORMAL = "subnormal"


@irdl_attr_definition
class TestpKindAttr(EnumAttribute[TestpKind], SpacedOpaqueSyntaxAttribute):
    name = "ptx.testp"


class PackedFloat(StrEnum):
    """A pair of floats packed in one register, as `cvt` writes it from two `.f32`."""

    F16X2 = "f16x2"
    BF16X2 = "bf16x2"
    E4M3X2 = "e4m3x2"
    E5M2X2 = "e5m2x2"
    E2M3X2 = "e2m3x2"
    E3M2X2 = "e3m2x2"
    E2M1X2 = "e2m1x2"

    @property
    def width(self) -> int:
        """The pair's bits: 2 x 16, 2 x 8 (the 8- and 6-bit formats), 2 x 4 (`e2m1`)."""
        if self in (PackedFloat.F16X2, PackedFloat.BF16X2):
            return 32
        return 8 if self is PackedFloat.E2M1X2 else 16

    @property
    def half(self) -> bool:
        return self in (PackedFloat.F16X2, PackedFloat.BF16X2)


@irdl_attr_definition
class PackedFloatAttr(EnumAttribute[PackedFloat], SpacedOpaqueSyntaxAttribute):
    name = "ptx.packed_float"


# --------------------------------------------------------------------------------------
# Verifier helpers: one PTX ISA rule per call, messages that name op, value and rule
# --------------------------------------------------------------------------------------


def reject(op: Operation, problem: str, allowed: str, rule: str) -> VerifyException:
    """`ptx.add: type .b32 is not allowed; add takes .u16/... (PTX ISA 9.0, ...)`."""
    return VerifyException(f"{op.name}: {problem} is not allowed; {allowed} ({rule})")


def check_type(op: Operation, type: PtxType, allowed: frozenset[PtxType], what: str, rule: str) -> None:
    if type not in allowed:
        order = [t for t in PtxType if t in allowed]
        raise reject(op, f"type .{type.value}", f"{what} takes {spell(order)}", rule)


def operand_text(value: SSAValue) -> str:
    if isinstance(value.type, RegisterType):
        return f"a .{value.type.kind.data} register ({value.type.register_name})"
    if isinstance(value.owner, ImmOp):
        return f"the immediate {value.owner.literal()}"
    return f"a {value.type}"


def register_class(kind: str) -> str:
    """The `.reg` class of a declared register type, by size: `.pred`, or `.bN` for any
    N-bit type (`.u32 .s32 .f32 .b32 .f16x2` are all `b32`). The backend declares only
    the classes; parsed PTX declares any type (PTX ISA 9.0, "Registers")."""
    if kind == "pred":
        return "pred"
    width = 32 if kind.endswith("x2") else int(kind.lstrip("bfsu"))
    return f"b{width}"


def _register_type_allowed(have: str, type: PtxType) -> bool:
    """PTX ISA 9.0, "Type Checking Rules": a `.bN` register (and every register for a
    `.bN` instruction) is fine; a float register only for float types, an integer one
    only for `.u`/`.s` types."""
    if have.startswith("b") or type.is_bits or type is PtxType.PRED:
        return True
    return have.startswith(("f", "bf")) == type.is_float


def check_operand(
    op: Operation, role: str, value: SSAValue, type: PtxType, rule: str, *, wider: bool = False, exact_kind: str = ""
) -> None:
    """A register operand must be of the `.reg` class of `type` (or wider, where the
    instruction allows it: `ld`/`cvt` destinations, `st` sources), and a declared
    float register only serves float types and an integer one `.u`/`.s` types; an
    immediate must be a float literal for float types and an integer literal for
    `.u`/`.s` types (PTX ISA 9.0, "Operand Size Exceeding Instruction-Type Size" and
    "Type Checking Rules"; ptxas: "Arguments mismatch")."""
    kind = exact_kind or type.register_kind
    value_type = value.type
    if isinstance(value_type, RegisterType):
        have = register_class(value_type.kind.data)
        ok = have == kind
        if not ok and wider and kind != "pred" and have != "pred":
            ok = int(have[1:]) >= int(kind[1:])
        if not ok:
            need = f".{kind} (or wider)" if wider and kind != "pred" else f".{kind}"
            raise reject(op, f"{role} {operand_text(value)}", f"it must be a {need} register", rule)
        if not _register_type_allowed(value_type.kind.data, type):
            raise reject(op, f"{role} {operand_text(value)}", f"a .{type.value} operand takes a .b, "
                         f"{'float' if type.is_float else 'integer'} register of its size", rule)  # fmt: skip
        return
    if isinstance(value_type, IntegerType):
        if type.is_float:
            raise reject(op, f"{role} {operand_text(value)}", f"a .{type.value} operand takes a float literal", rule)
        return
    if isinstance(value.owner, ImmOp) and (type.is_integer or type is PtxType.PRED):
        raise reject(op, f"{role} {operand_text(value)}", f"a .{type.value} operand takes an integer literal", rule)
    if isinstance(value.owner, ImmOp) and isinstance(value_type, AnyFloat) and value_type.bitwidth != type.width:
        raise reject(
            op, f"{role} {operand_text(value)}", f"a .{type.value} operand takes a {type.width}-bit float literal", rule
        )


def immediate(value: SSAValue | None) -> int | None:
    """The integer literal of an immediate operand, else None (a register)."""
    if value is not None and isinstance(value.owner, ImmOp) and isinstance(value.owner.value, IntegerAttr):
        return value.owner.value.value.data
    return None


def check_register(op: Operation, role: str, value: SSAValue | None, kind: str, rule: str) -> None:
    """`value` (if any) is a `.kind` register or an integer immediate (e.g. `bar.sync`'s
    `.u32` operands, `tcgen05.alloc`'s `ncols`)."""
    if value is None:
        return
    if isinstance(value.type, RegisterType):
        if register_class(value.type.kind.data) != kind:
            raise reject(op, f"{role} {operand_text(value)}", f"it must be a .{kind} register or an immediate", rule)
    elif not isinstance(value.type, IntegerType):
        raise reject(op, f"{role} {operand_text(value)}", "it must be a register or an integer immediate", rule)


def check_only_register(op: Operation, role: str, value: SSAValue | None, kind: str, rule: str) -> None:
    """`value` (if any) is a `.kind` register (any declared type of its size); immediates are not allowed."""
    if value is None:
        return
    if not isinstance(value.type, RegisterType) or register_class(value.type.kind.data) != kind:
        raise reject(op, f"{role} {operand_text(value)}", f"it must be a .{kind} register", rule)


def check_semantics(op: Operation, mnemonic: str, rule: str, *, pack: int = 0, unpack: int = 0) -> None:
    """The op's spelling is one the value semantics (`xdsl_tmem.interpreter.ptx`) decode:
    one shared check, so the legal type/modifier combinations of these instructions are
    written once, in the semantics' decoders (docs/ptx-semantics.md)."""
    from xdsl_tmem.interpreter.ptx import UnsupportedInstruction, decode

    opcode, *modifiers = mnemonic.split(".")
    try:
        decode(opcode, tuple(modifiers), pack=pack, unpack=unpack)
    except UnsupportedInstruction as e:
        raise reject(op, mnemonic, e.why, rule) from None


def space_suffix(space: StateSpaceAttr | None) -> str:
    return "" if space is None else f".{space.data.value}"


def check_space(op: Operation, space: StateSpaceAttr | None, allowed: frozenset[StateSpace], rule: str) -> None:
    if space is not None and space.data not in allowed:
        order = [s for s in StateSpace if s in allowed]
        raise reject(op, f"state space .{space.data.value}", f"it takes {spell(order)} or none (generic)", rule)
