"""Instruction selection: nvvm + llvm + arith + scf/cf → the `ptx` dialect.

Each kernel (`llvm.func` or `func.func` with `nvvm.kernel`) becomes a `ptx.function`
(`.visible .entry`, the same structure the PTX front end builds) whose body is its
`ptx.reg_decl`s and a flat instruction list. The selector walks the function in order
with a value map from MLIR values to PTX operands:

* scalars map to one register, immediate, symbol or special register; vectors to
  one per element (a `tcgen05.ld` result is just its registers);
* pointers map to an `Address` (base + constant byte offset), so that
  `getelementptr`s with constant indices fold into `[base+offset]` operands.

Shared-memory, TMEM and shared::cluster pointers are 32-bit (`.b32`) as in
hand-written PTX, generic and global ones 64-bit. Structured control flow becomes
labels and branches: loops are rotated (one conditional branch per iteration),
branches on warp-uniform conditions are `bra.uni`, and small `scf.if`s without
results are predicated instead of branched around. The blocking
`nvvm.mbarrier.try_wait.parity` becomes the two-instruction loop
`try_wait.parity; @!p bra`.

Mnemonics follow llc-22's spelling (`mbarrier.init.shared.b64`, ...), so that the
tcgen05/mbarrier/barrier/elect instructions of a program can be compared with
llc-22's one for one (`tests/test_ptx_backend.py`).

The package: `core` (the selection context `FunctionSelector`, the rule registry
`RULES` and the `@rule` decorator, type helpers), one rule module per op family
(`arith`, `memory`, `control`, `nvvm_sync`, `tcgen05`), and `kernel` (kernels and the
module), which imports the rule modules so that every rule is registered. One rule per
op class; an op without a rule is reported at its location, never skipped. No module
of the package imports one that (directly or not) imports it back
(`tests/test_ptx_backend.py::test_isel_package_has_no_import_cycle`).
"""

from xdsl_tmem.backend.isel.core import (
    RULES,
    Address,
    FunctionSelector,
    IselError,
    Operand,
    Rule,
    UnsupportedTypeError,
    rule,
)
from xdsl_tmem.backend.isel.kernel import select_kernel, select_module

__all__ = [
    "RULES",
    "Address",
    "FunctionSelector",
    "IselError",
    "Operand",
    "Rule",
    "UnsupportedTypeError",
    "rule",
    "select_kernel",
    "select_module",
]
