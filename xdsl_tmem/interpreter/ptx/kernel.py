"""Launching a PTX kernel (`.entry`): its shared variables, directives and parameters, decoded once."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from xdsl_tmem.diagnostics import PARSED_SOURCES, SourceMap
from xdsl_tmem.dialects import ptx
from xdsl_tmem.interpreter.launch import (
    DTYPES,
    Argument,
    BufferArgument,
    Geometry,
    Launch,
    LaunchError,
    PointerArgument,
    ScalarArgument,
    ScalarField,
    StructArgument,
)
from xdsl_tmem.interpreter.machine import MAX_SHARED_BYTES, Cluster, Cta, GlobalMemory, SharedLayout
from xdsl_tmem.interpreter.ptx import async_copy, atomics, barriers, calls, parsed, tma_copy, value_ops
from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE
from xdsl_tmem.interpreter.ptx.program import Decoded, Decoder, Parameter, Program, Refused, parse_parameter
from xdsl_tmem.interpreter.ptx.warp import PtxWarp
from xdsl_tmem.interpreter.tma import TensorMap, TensorMapArgument, TensorMapError

DECODER_MODULES = (async_copy, atomics, barriers, calls, parsed, tma_copy, value_ops)
"""Modules of per-op decoders beside program.py's, imported for their `@decodes` registrations."""


def find_entry(module: ModuleOp, name: str) -> ptx.FunctionOp | None:
    """The kernel (`.entry`) named `name` with a body, if the module has one."""
    for op in module.walk():
        if isinstance(op, ptx.FunctionOp) and op.sym_name.data == name and op.kind.data == "entry" and op.body.blocks:
            return op
    return None


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


def shared_layout(entry: ptx.FunctionOp, dynamic_bytes: int = 0) -> SharedLayout:
    """The `.shared` variables of the module and of the kernel's body, in declaration
    order, aligned (ptxas's placement, as for the NVVM level's globals). Variables of
    other spaces take no room here: an instruction naming one is refused when it runs.
    Unsized `.extern .shared` arrays are the launch's dynamic shared memory
    (`dynamic_bytes`): they all start at one address after the static variables (CUDA
    Programming Guide, "Shared Memory": every extern array starts at the same address)."""
    layout = SharedLayout()
    dynamic: list[tuple[str, int]] = []
    module = entry.parent_op()
    variables = (
        [op for op in module.body.block.ops if isinstance(op, ptx.VariableOp)]
        if isinstance(module, ptx.ModuleOp)
        else []
    )
    variables += [op for op in entry.walk() if isinstance(op, ptx.VariableOp)]
    for op in variables:
        decl = op.decl
        if decl.space.data != "shared":
            continue
        if decl.type.data not in LANE_DTYPE:
            raise LaunchError(f".shared variable {decl.sym_name.data}: type .{decl.type.data} is not modelled", op)
        dims = [d.data for d in decl.dims]
        element = LANE_DTYPE[decl.type.data].itemsize * max(decl.vector.data, 1)
        if any(d < 0 for d in dims):
            dynamic.append((decl.sym_name.data, decl.align.data or element))
            continue
        layout.add(decl.sym_name.data, element * int(np.prod(dims)) if dims else element, decl.align.data or element)
    layout.add_dynamic(dynamic, dynamic_bytes)
    if layout.size > MAX_SHARED_BYTES:
        raise LaunchError(f"the .shared variables need {layout.size} bytes, more than the {MAX_SHARED_BYTES} of a CTA")
    return layout


def directives(entry: ptx.FunctionOp) -> dict[str, tuple[int, ...] | None]:
    """`.maxntid`, `.reqntid`, `.reqnctapercluster` as declared (None where absent)."""
    return {
        f".{name}": None if (value := getattr(entry, name)) is None else tuple(e.data for e in value)
        for name in ("maxntid", "reqntid", "reqnctapercluster")
    }


def parameters(entry: ptx.FunctionOp) -> list[Parameter]:
    params: list[Parameter] = []
    offset = 0
    for decl in entry.params or ():
        try:
            param = parse_parameter(decl, offset)
        except Refused as e:
            raise LaunchError(f"kernel parameter: {e}", entry) from None
        params.append(param)
        offset = param.offset + param.size
    return params


TENSOR_MAP_BYTES = 128
"""A `CUtensorMap` is 128 opaque bytes (CUDA driver API, `CUtensorMap`)."""


def bind_parameters(
    entry: ptx.FunctionOp,
    params: list[Parameter],
    args: Mapping[str, Argument],
    memory: GlobalMemory,
    tensor_maps: dict[int, TensorMap] | None = None,
) -> tuple[bytearray, dict[str, NDArray[Any]]]:
    """The parameter space's bytes: pointers are the addresses of copies of the buffers
    given, scalars their value in the parameter's type; byval arrays take a buffer's bytes
    or a `StructArgument`'s fields; a `TensorMapArgument`'s map (its buffer placed) goes
    into `tensor_maps` by the parameter's offset, its bytes stay zero (opaque). Parameters
    are named by their `.param` name or by position (`arg0`, ...); a buffer that only
    pointers or tensor maps refer to is named by itself."""
    _check_names(entry, params, args)
    space = bytearray(max((p.offset + p.size for p in params), default=0))
    outputs: dict[str, NDArray[Any]] = {}
    addresses: dict[str, int] = {}

    def copy_of(name: str, buffer: BufferArgument) -> int:
        """The address of the launch's one copy of a buffer (pointers and tensor maps share it)."""
        if name not in addresses:
            outputs[name] = np.array(buffer.value, copy=True, order="C")
            addresses[name] = memory.add(name, outputs[name])
        return addresses[name]

    def address(owner: str, pointer: PointerArgument) -> bytes:
        name = pointer.buffer
        if name is not None and name not in addresses:
            target = args.get(name)
            if not isinstance(target, BufferArgument):
                buffers = sorted(n for n, a in args.items() if isinstance(a, BufferArgument))
                raise LaunchError(
                    f"argument '{owner}' points to '{name}', which is no buffer argument (buffers: "
                    f"{', '.join(buffers) or 'none'})",
                    entry,
                )
            copy_of(name, target)
        return np.array([0 if name is None else addresses[name]], dtype=np.uint64).tobytes()

    for i, param in enumerate(params):
        argument = _argument(entry, args, param, i)
        if isinstance(argument, TensorMapArgument):
            _bind_tensor_map(entry, param, argument, address, tensor_maps)
            continue
        raw = _parameter_bytes(entry, param, argument, address, copy_of)
        space[param.offset : param.offset + len(raw)] = raw
    return space, outputs


def _parameter_bytes(
    entry: ptx.FunctionOp,
    param: Parameter,
    argument: BufferArgument | ScalarArgument | PointerArgument | StructArgument,
    address: Callable[[str, PointerArgument], bytes],
    copy_of: Callable[[str, BufferArgument], int],
) -> bytes:
    """One parameter's bytes from its argument (a tensor map aside: `_bind_tensor_map`)."""
    dtype = LANE_DTYPE[param.type]
    if isinstance(argument, StructArgument):
        if param.array is None:
            raise LaunchError(f"argument '{param.name}' is a struct, but .param .{param.type} is no byval "
                              "array", entry)  # fmt: skip
        raw = _struct_bytes(entry, param, argument, address)
    elif isinstance(argument, PointerArgument):
        if not param.pointer and not (param.array is None and dtype.itemsize == 8):
            what = f"a byval array of {param.size} bytes (struct:0=ptr:BUFFER)" if param.array else "no pointer"
            raise LaunchError(f"argument '{param.name}' is a pointer, but .param .{param.type} is {what}", entry)
        raw = address(param.name, argument)
    elif isinstance(argument, BufferArgument) and param.array is None:
        if dtype.itemsize != 8:
            raise LaunchError(f"argument '{param.name}' is a buffer, but .param .{param.type} is no pointer", entry)
        raw = np.array([copy_of(param.name, argument)], dtype=np.uint64).tobytes()
    elif isinstance(argument, BufferArgument):
        raw = np.ascontiguousarray(argument.value).tobytes()
        if len(raw) != param.size:
            raise LaunchError(f"argument '{param.name}' has {len(raw)} bytes; the byval .param takes "
                              f"{param.size}", entry)  # fmt: skip
    else:
        if param.pointer:
            raise LaunchError(f"argument '{param.name}' is a pointer; pass a numpy array, a PointerArgument "
                              "(--arg NAME=ptr:BUFFER) or null", entry)  # fmt: skip
        raw = _scalar_bytes(entry, param, argument.value, dtype)
    return raw


def _argument(entry: ptx.FunctionOp, args: Mapping[str, Argument], param: Parameter, i: int) -> Argument:
    argument = args.get(param.name, args.get(f"arg{i}"))
    if argument is None:
        raise LaunchError(f"missing argument '{param.name}' (.{param.type}, parameter {i})", entry)
    return argument


def _bind_tensor_map(
    entry: ptx.FunctionOp,
    param: Parameter,
    argument: TensorMapArgument,
    address: Callable[[str, PointerArgument], bytes],
    tensor_maps: dict[int, TensorMap] | None,
) -> None:
    if param.array is None or param.size != TENSOR_MAP_BYTES:
        raise LaunchError(f"argument '{param.name}' is a tensor map, but .param .{param.type} is no byval array of "
                          f"{TENSOR_MAP_BYTES} bytes (.param .align 64 .b8 {param.name}[128])", entry)  # fmt: skip
    base = int(np.frombuffer(address(param.name, PointerArgument(argument.buffer)), dtype=np.uint64)[0])
    try:
        tmap = argument.bind(base)
    except TensorMapError as e:
        raise LaunchError(f"argument '{param.name}': {e}", entry) from None
    if tensor_maps is not None:
        tensor_maps[param.offset] = tmap


def _struct_bytes(
    entry: ptx.FunctionOp, param: Parameter, struct: StructArgument, address: Callable[[str, PointerArgument], bytes]
) -> bytes:
    """A byval parameter's bytes from its fields, each checked to lie inside it, aligned
    to its size and clear of the others."""
    raw = bytearray(param.size)
    end = 0
    for offset, field in sorted(struct.fields.items()):
        size = 8 if isinstance(field, PointerArgument) else DTYPES[field.dtype].itemsize
        kind = "ptr" if isinstance(field, PointerArgument) else field.dtype
        where = f"argument '{param.name}': field {offset}={kind} ({size} bytes)"
        if offset < 0 or offset + size > param.size:
            raise LaunchError(f"{where} lies outside the {param.size}-byte parameter", entry)
        if offset % size:
            raise LaunchError(f"{where} is misaligned: its offset must be a multiple of {size}", entry)
        if offset < end:
            raise LaunchError(f"{where} overlaps the field before it (which ends at byte {end})", entry)
        end = offset + size
        if isinstance(field, PointerArgument):
            raw[offset:end] = address(param.name, field)
        else:
            raw[offset:end] = _field_bytes(entry, param.name, offset, field)
    return bytes(raw)


def _check_names(entry: ptx.FunctionOp, params: list[Parameter], args: Mapping[str, Argument]) -> None:
    """Every argument names a parameter, or is a buffer that a pointer refers to."""
    names = [p.name for p in params]
    referenced = {f.buffer for f in _pointers(args.values()) if f.buffer is not None}
    referenced |= {a.buffer for a in args.values() if isinstance(a, TensorMapArgument)}
    unknown = sorted(set(args) - set(names) - {f"arg{i}" for i in range(len(names))} - referenced)
    if unknown:
        raise LaunchError(
            f"no parameter named {', '.join(unknown)}, and no pointer refers to {'them' if len(unknown) > 1 else 'it'} "
            f"(parameters: {', '.join(names)})",
            entry,
        )


def _pointers(args: Iterable[Argument]) -> Iterator[PointerArgument]:
    for argument in args:
        if isinstance(argument, PointerArgument):
            yield argument
        elif isinstance(argument, StructArgument):
            yield from (f for f in argument.fields.values() if isinstance(f, PointerArgument))


def _field_bytes(entry: ptx.FunctionOp, name: str, offset: int, field: ScalarField) -> bytes:
    dtype = DTYPES[field.dtype]
    value = cast(object, field.value)  # run_kernel callers may pass any object
    if dtype.kind == "f" and isinstance(value, int | float | np.integer | np.floating):
        return np.array([value], dtype=dtype).tobytes()
    if dtype.kind in "iu" and isinstance(value, int | np.integer):
        info, number = np.iinfo(dtype), int(cast(int, value))
        if info.min <= number <= info.max:
            return np.array([number], dtype=dtype).tobytes()
        raise LaunchError(f"argument '{name}': field {offset}={field.dtype} value {value} is outside "
                          f"[{info.min}, {info.max}]", entry)  # fmt: skip
    raise LaunchError(f"argument '{name}': field {offset}={field.dtype} takes "
                      f"{'a number' if dtype.kind == 'f' else 'an integer'}, got {value!r}", entry)  # fmt: skip


def _scalar_bytes(entry: ptx.FunctionOp, param: Parameter, value: Any, dtype: np.dtype[Any]) -> bytes:
    if param.array is not None:
        raise LaunchError(f"argument '{param.name}' is a byval array of {param.size} bytes; pass a numpy array", entry)
    if dtype.kind == "f":
        if not isinstance(value, int | float | np.integer | np.floating):
            raise LaunchError(f"argument '{param.name}' has type .{param.type}; pass a number, got {value!r}", entry)
        return np.array([value], dtype=dtype).tobytes()
    if not isinstance(value, int | np.integer):
        raise LaunchError(f"argument '{param.name}' has type .{param.type}; pass an integer, got {value!r}", entry)
    bits, number = 8 * dtype.itemsize, int(cast(int, value))
    if not -(1 << (bits - 1)) <= number < 1 << bits:  # its bits as signed or unsigned; nothing truncated
        raise LaunchError(f"argument '{param.name}' has type .{param.type}: {number} does not fit in {bits} bits "
                          f"(allowed: {-(1 << (bits - 1))} to {(1 << bits) - 1})", entry)  # fmt: skip
    return np.array([number & ((1 << bits) - 1)], dtype=f"<u{dtype.itemsize}").tobytes()


@dataclass
class PtxLaunch:
    """A PTX kernel (`.entry`) decoded for one launch: what `run.prepare` needs beyond the geometry."""

    program: Program
    layout: SharedLayout
    memory: GlobalMemory
    outputs: dict[str, NDArray[Any]]

    def make_warp(self, cluster: Cluster, cta: Cta, index: int, geometry: Geometry) -> PtxWarp:
        return PtxWarp(self.program, cluster, cta, index, geometry)


def decode_launch(module: ModuleOp, launch: Launch, entry: ptx.FunctionOp, points: str) -> PtxLaunch:
    """Lay out the kernel's `.shared` variables, bind its parameters, decode it."""
    layout = shared_layout(entry, launch.dynamic_shared_bytes)
    params = parameters(entry)
    memory = GlobalMemory()
    tensor_maps: dict[int, TensorMap] = {}
    param_bytes, outputs = bind_parameters(entry, params, launch.arguments, memory, tensor_maps)
    decoder = Decoder(entry, layout, params, points)
    decoder.param_bytes = param_bytes
    decoder.tensor_maps = memory.tensor_maps = tensor_maps
    try:
        program = decoder.decode(module)
    except Refused as e:
        raise LaunchError(f"xdsl-tmem-run: kernel {entry.sym_name.data}: {e}", entry) from None
    number_lines(program)
    return PtxLaunch(program, layout, memory, outputs)


def number_lines(program: Program) -> None:
    """The line of each instruction a report names: in the user's file for PTX the
    front end read from one (`PARSED_SOURCES`), else in the PTX text our printer writes
    for the module (PTX generated in-process)."""
    from xdsl_tmem.backend.printer import operand_text, ptx_text

    module = program.entry.parent_op()
    if not isinstance(module, ptx.ModuleOp):
        return
    if (source_map := PARSED_SOURCES.get(module)) is not None and _number_source_lines(program, source_map):
        return
    try:
        lines = ptx_text(module).splitlines()
    except ValueError:  # an op the printer cannot render (printer.py raises ValueError): reports name the op only
        return
    # By op, in the module's order: an inlined callee's instructions (calls.py) come after
    # the call in the program but may be printed before the kernel.
    line_of: dict[Operation, int] = {}
    at = 0
    for op in module.walk():
        if not isinstance(op, ptx.Instruction):
            continue
        text = op.ptx_line(operand_text)
        for n in range(at, len(lines)):
            if lines[n].strip() == text:
                line_of[op], at = n + 1, n + 1
                break
    for decoded in program.code:
        decoded.line = line_of.get(decoded.op, 0)


def _number_source_lines(program: Program, source_map: SourceMap) -> bool:
    """Each instruction's file and line from the parser's spans; False (nothing
    numbered) if an instruction has none (made after parsing): one numbering per report."""
    located: list[tuple[Decoded, str, int]] = []
    for decoded in program.code:
        if not isinstance(decoded.op, ptx.Instruction):
            continue
        span = source_map.spans.get(decoded.op)
        if span is None:
            return False
        location = span.get_location()
        located.append((decoded, span.input.name, location.line + source_map.line_offset))
    for decoded, name, line in located:
        decoded.source, decoded.line = name, line
    return True
