"""Our `irdl_op_definition` (dialects/op_definition.py) compiles an op's assembly format
on first use: the result must be what xDSL's decorator builds at class definition."""

from __future__ import annotations

from typing import ClassVar

import pytest
from xdsl.dialects.builtin import i32
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, result_def
from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import PyRDLOpDefinitionError

from xdsl_tmem.dialects import llvm_ext, nvvm, ptx, tmem
from xdsl_tmem.dialects.op_definition import format_program, irdl_op_definition

OURS: list[type[Operation]] = [
    *tmem.Tmem.operations, *nvvm.NVVM.operations, *ptx.PTX.operations, *llvm_ext.LLVM_EXTENSION_OPS,
]  # fmt: skip


@pytest.mark.parametrize("op", OURS, ids=lambda op: op.name)
def test_every_format_compiles_to_xdsls_program(op: type[Operation]) -> None:
    assert issubclass(op, IRDLOperation)
    op_def = op.get_irdl_definition()
    assert op_def.assembly_format == op.assembly_format
    if op.assembly_format is None:
        assert format_program(op) is None
    else:
        assert format_program(op) == FormatProgram.from_str(op.assembly_format, op_def)


def test_the_format_is_compiled_once_on_first_use() -> None:
    @irdl_op_definition
    class _Op(IRDLOperation):
        name = "lazy.op"
        res = result_def(i32)
        assembly_format = "attr-dict `:` type($res)"

    assert _Op.assembly_format == "attr-dict `:` type($res)"  # the class reads as before
    program = format_program(_Op)
    assert program is not None
    assert format_program(_Op) is program


def test_an_invalid_format_raises_xdsls_error_at_first_use() -> None:
    @irdl_op_definition
    class _Bad(IRDLOperation):
        name = "lazy.bad"
        res = result_def(i32)
        assembly_format = "attr-dict `:` type($nothing)"

    with pytest.raises(PyRDLOpDefinitionError, match="Error during the parsing of the assembly format"):
        format_program(_Bad)


def test_a_format_and_custom_syntax_are_refused_at_definition() -> None:
    with pytest.raises(PyRDLOpDefinitionError, match="Cannot define both an assembly format"):

        @irdl_op_definition
        class _Both(IRDLOperation):  # pyright: ignore[reportUnusedClass]
            name = "lazy.both"
            res = result_def(i32)
            assembly_format: ClassVar[str | None] = "attr-dict `:` type($res)"

            @classmethod
            def parse(cls, parser: Parser) -> _Both:
                raise NotImplementedError

            def print(self, printer: Printer) -> None:
                raise NotImplementedError
