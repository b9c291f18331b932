"""Destination registers of a `tcgen05.ld` in flight.

PTX ISA, "tcgen05.wait": `tcgen05.ld` is asynchronous and its destination registers are
undefined until the issuing thread's `tcgen05.wait::ld`. The load's result goes into the
register file as a `PendingRegister`, which holds the values and raises the hazard
`tcgen05-ld-register-before-wait` on any read (numpy conversion, arithmetic, indexing,
attribute use): the readers of every instruction see it without a check of their own, so
the decoders' hot paths cost nothing. `tcgen05.wait::ld` puts the values in place
(`complete`). A register the warp overwrites before the wait simply loses the marker (the
later write is not checked against the load's). A `mov` that packs or unpacks such
registers (llc-22 packs pairs of loaded registers into a `.b64` before the wait) copies
the pending state instead of reading (`program._copying`): its results are pending too,
until the wait. (Treating a copy as no use is our reading: the ISA says the registers
are undefined before the wait, and a copy of them is only used after it.)
"""

from __future__ import annotations

from typing import Any, NoReturn

from xdsl_tmem.interpreter.machine import Hazard

CLASS = "tcgen05-ld-register-before-wait"


class PendingRegister:
    """A `tcgen05.ld` destination whose load `wait::ld` has not completed."""

    __slots__ = ("load", "values")

    def __init__(self, values: Any, load: Any):
        self.values = values
        self.load = load
        """The `tcgen05.ld` op, for the report."""

    def _read(self, *_: Any, **__: Any) -> NoReturn:
        raise Hazard(
            CLASS,
            "reads a destination register of a tcgen05.ld before the warp's tcgen05.wait::ld: the register is "
            "undefined until the wait completes the load (PTX ISA, tcgen05.wait)",
            [(self.load, "the tcgen05.ld in flight")],
        )

    # Every way an instruction's semantics can use a lane array.
    __array__ = __array_ufunc__ = __array_function__ = _read
    __getitem__ = __iter__ = __len__ = __int__ = __index__ = __float__ = __bool__ = _read
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __and__ = __rand__ = _read
    __or__ = __ror__ = __xor__ = __rxor__ = __lshift__ = __rshift__ = __invert__ = __neg__ = _read
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _read  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]

    def __getattr__(self, name: str) -> NoReturn:
        self._read()

    def tobytes(self) -> bytes:
        """The state key of exploration (not a read by the program)."""
        return b"pending:" + bytes(self.values.tobytes())


def complete(registers: list[Any]) -> None:
    """`tcgen05.wait::ld`: the warp's loads are complete; their registers hold the values.
    (The register file is scanned by `list.index` over the registers' classes, in C: a
    kernel has hundreds of registers and a few pending ones.)"""
    kinds = list(map(type, registers))
    slot = -1
    while True:
        try:
            slot = kinds.index(PendingRegister, slot + 1)
        except ValueError:
            return
        registers[slot] = registers[slot].values
