"""Running parsed PTX: for now, finding the kernel and refusing its first instruction.

The interpreter does not execute `ptx.inst` (the generic op): the typed PTX ops that
will replace it, instruction family by instruction family, are the next step. Until
then `xdsl-tmem-run k.ptx` reads the file, finds the kernel, and stops with a located
error at the first instruction the kernel would execute, naming its opcode.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block

from xdsl_tmem.dialects import ptx
from xdsl_tmem.interpreter.launch import LaunchError


def ptx_kernel(module: ModuleOp, name: str) -> ptx.FunctionOp:
    """The `.entry` named `name`, or a `LaunchError` listing the module's kernels."""
    functions = [op for op in module.walk() if isinstance(op, ptx.FunctionOp)]
    kernels = [f.sym_name.data for f in functions if f.kind.data == "entry"]
    listed = f"its kernels: {', '.join(kernels)}" if kernels else "it has no .entry"
    for function in functions:
        if function.sym_name.data == name:
            if function.kind.data != "entry":
                raise LaunchError(f"{name} is a .func, not a kernel (.entry); {listed}", function)
            if not function.body.blocks:
                raise LaunchError(f"kernel {name} has no body (it is only declared here)", function)
            return function
    raise LaunchError(f"no .entry {name} in the PTX module; {listed}")


def instructions(block: Block) -> Iterator[ptx.Instruction]:
    """The instructions of a body in program order, scopes included."""
    for op in block.ops:
        if isinstance(op, ptx.ScopeOp):
            yield from instructions(op.body.block)
        elif isinstance(op, ptx.Instruction):
            yield op


def refuse_execution(kernel: ptx.FunctionOp) -> LaunchError:
    """The error for running `kernel`: located at the first instruction it executes."""
    first = next(instructions(kernel.body.block), None)
    if first is None:
        return LaunchError(f"kernel {kernel.sym_name.data} has no instructions; the PTX interpreter cannot run it yet")
    opcode = first.opcode.data if isinstance(first, ptx.InstOp) else first.mnemonic().split(".")[0]
    return LaunchError(
        f"cannot execute '{first.mnemonic()}' (opcode {opcode}): the interpreter does not execute PTX "
        "instructions yet; xdsl-tmem-opt reads and prints this file",
        first,
    )
