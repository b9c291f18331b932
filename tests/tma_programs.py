"""NVVM-level TMA programs for tests/test_nvvm_tma_run.py, written the way the H100 programs
of silicon/programs/tma/ are: per round, every thread fills the CTA's shared buffer (0xA5
bytes, or a hash of the word index), thread 0 of the issuing CTAs issues the round's copies
(after `mbarrier.arrive.expect_tx` in every CTA, when the round waits), every thread waits
on the round's mbarrier phase and copies the shared buffer verbatim to `out` (so `out` holds
the exact shared image of each round, of each CTA)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

TMAP = "!llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}"
THREADS = 128
FILL = 0xA5A5A5A5
HASH = (2654435761, 0xFFFFFFFF, 0)
"""A fill pattern (MUL, AND, OR): word k holds (k * MUL mod 2^32) & AND | OR."""


def silicon_pattern(case: int) -> tuple[int, int, int]:
    """The pattern the H100 store and reduction programs fill their source with for case
    `case` (its number + 1 in the top byte)."""
    return (40503, 0xFFFFFF, (case + 1) << 24)


def hash_fill(words: int, pattern: tuple[int, int, int] = HASH) -> np.ndarray:
    mul, keep, set_ = pattern
    return ((np.arange(words, dtype=np.uint64) * mul % (1 << 32)).astype(np.uint32) & keep) | set_


@dataclass(frozen=True)
class Round:
    """`ops`: the copies thread 0 of each CTA in `issuers` issues (text using `%s`, the
    shared buffer, `%bar`, the mbarrier, and the parameters). `expect_tx`: the bytes each
    CTA's thread 0 expects on the mbarrier (None: the round does not wait)."""

    ops: str
    expect_tx: int | None
    issuers: Sequence[int] = (0,)
    pattern: tuple[int, int, int] | None = None
    """Fill with this pattern (`hash_fill`) instead of 0xA5 bytes."""
    tx_per_rank: int = 0
    """Added to `expect_tx` per cluster rank (CTAs that receive different multicasts)."""


@dataclass
class Program:
    tmaps: Sequence[str]
    smem_bytes: int
    rounds: Sequence[Round]
    cluster: int = 1
    pointers: Sequence[str] = ()
    """Global pointer parameters (`!llvm.ptr<1>`) after the tensor maps, before `%out`."""
    prefetch: bool = False
    _n: list[int] = field(default_factory=lambda: [0])

    def text(self) -> str:
        params = [f"%{t}: {TMAP}" for t in self.tmaps] + [f"%{p}: !llvm.ptr<1>" for p in self.pointers]
        attrs = f"nvvm.kernel, nvvm.reqntid = array<i32: {THREADS}>"
        if self.cluster > 1:
            attrs += f", nvvm.cluster_dim = array<i32: {self.cluster}, 1, 1>"
        rank = "nvvm.read.ptx.sreg.cluster.ctarank : i32" if self.cluster > 1 else "llvm.mlir.constant(0 : i32) : i32"
        prefetch = "".join(f"      nvvm.prefetch tensormap, %{t} : !llvm.ptr\n" for t in self.tmaps if self.prefetch)
        body = "".join(self._round(r, k) for k, r in enumerate(self.rounds))
        smem = f"!llvm.array<{self.smem_bytes} x i8>"
        return f"""module {{
  llvm.mlir.global internal @smem() {{addr_space = 3 : i32, alignment = 1024 : i64}} : {smem}
  llvm.mlir.global internal @bars() {{addr_space = 3 : i32, alignment = 8 : i64}} : !llvm.array<2 x i64>
  llvm.func @k({", ".join([*params, "%out: !llvm.ptr<1>"])}) attributes {{{attrs}}} {{
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %rank = {rank}
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %nt = llvm.mlir.constant({THREADS} : i32) : i32
    %words = llvm.mlir.constant({self.smem_bytes // 4} : i32) : i32
    %fill = llvm.mlir.constant({FILL - (1 << 32)} : i32) : i32
    %s = llvm.mlir.addressof @smem : !llvm.ptr<3>
    %b = llvm.mlir.addressof @bars : !llvm.ptr<3>
    %first = llvm.icmp "eq" %tid, %c0 : i32
    scf.if %first {{
      nvvm.mbarrier.init %b, %c1 : !llvm.ptr<3>, i32
      %b1 = llvm.getelementptr %b[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.init %b1, %c1 : !llvm.ptr<3>, i32
{prefetch}      nvvm.fence.mbarrier.init
    }}
{body}    llvm.return
  }}
}}
"""

    def _sync(self) -> str:
        return "    nvvm.cluster.arrive\n    nvvm.cluster.wait\n" if self.cluster > 1 else "    nvvm.barrier0\n"

    def _round(self, r: Round, k: int) -> str:
        value = "%fill"
        hashed = ""
        if r.pattern is not None:
            mul, keep, set_ = (v - (1 << 32) if v >= 1 << 31 else v for v in r.pattern)
            value = "%v"
            hashed = (f"      %mul = llvm.mlir.constant({mul} : i32) : i32\n"
                      f"      %keep = llvm.mlir.constant({keep} : i32) : i32\n"
                      f"      %set = llvm.mlir.constant({set_} : i32) : i32\n"
                      "      %v0 = llvm.mul %i, %mul : i32\n      %v1 = llvm.and %v0, %keep : i32\n"
                      "      %v = llvm.or %v1, %set : i32\n")  # fmt: skip
        issuers = " ".join(f"%is{k}_{i}" for i in r.issuers)
        checks = "".join(f"    %r{k}_{i} = llvm.mlir.constant({i} : i32) : i32\n"
                         f"    %is{k}_{i} = llvm.icmp \"eq\" %rank, %r{k}_{i} : i32\n" for i in r.issuers)  # fmt: skip
        either = f"%is{k}_{r.issuers[0]}"
        for i in r.issuers[1:]:
            checks += f"    %or{k}_{i} = llvm.or {either}, %is{k}_{i} : i1\n"
            either = f"%or{k}_{i}"
        del issuers
        text = f"""    scf.for %i = %tid to %words step %nt : i32 {{
{hashed}      %p = llvm.getelementptr %s[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
      llvm.store {value}, %p : i32, !llvm.ptr<3>
    }}
    nvvm.fence.proxy {{kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}}
{self._sync()}{checks}    %issue{k} = llvm.and %first, {either} : i1
"""
        if r.expect_tx is not None:
            text += f"""    scf.if %first {{
      %tx{k}c = llvm.mlir.constant({r.expect_tx} : i32) : i32
      %tx{k}r = llvm.mlir.constant({r.tx_per_rank} : i32) : i32
      %tx{k}m = llvm.mul %tx{k}r, %rank : i32
      %tx{k} = llvm.add %tx{k}c, %tx{k}m : i32
      %bar{k} = llvm.getelementptr %b[{k % 2}] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.arrive.expect_tx %bar{k}, %tx{k} : !llvm.ptr<3>, i32
    }}
"""
        ops = r.ops.replace("%bar", f"%bar{k}w").replace("%K", str(k))
        text += f"""    %bar{k}w = llvm.getelementptr %b[{k % 2}] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
    scf.if %issue{k} {{
{ops}    }}
"""
        if r.expect_tx is not None:
            parity = (k // 2) % 2
            text += f"""    %ph{k} = llvm.mlir.constant({parity} : i32) : i32
    nvvm.mbarrier.try_wait.parity %bar{k}w, %ph{k}, %c0 : !llvm.ptr<3>, i32, i32
    %base{k} = llvm.mlir.constant({k * self.cluster} : i32) : i32
    %slot{k} = llvm.add %base{k}, %rank : i32
    %at{k} = llvm.mul %slot{k}, %words : i32
    scf.for %i = %tid to %words step %nt : i32 {{
      %p = llvm.getelementptr %s[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
      %v = llvm.load %p : !llvm.ptr<3> -> i32
      %j = llvm.add %at{k}, %i : i32
      %q = llvm.getelementptr %out[%j] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %v, %q : i32, !llvm.ptr<1>
    }}
"""
        return text + self._sync()


@dataclass(frozen=True)
class LoadForm:
    """The optional parts of a load: an L2 cache hint, a predicate (an i1 constant), the
    `.shared::cta` destination (`isCTAOnly`), a `group` (1 or 2). The predicate holds or
    not in the issuing thread (thread 0)."""

    hint: bool = False
    predicate: bool | None = None
    cta_only: bool = False
    group: int | None = None


def tensor_load(
    tmap: str, coords: Sequence[int], dst: int, mask: int | None = None, tag: str = "", form: LoadForm = LoadForm()
) -> str:
    """A tensor load of the box at `coords` into shared byte `dst` on `%bar`."""
    n = f"{tmap}_{dst}_{tag}_%K"
    lines = [f"      %o{n} = llvm.getelementptr %s[{dst}] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8\n"]
    if form.cta_only:
        lines.append(f"      %d{n} = llvm.getelementptr %o{n}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8\n")
    else:
        lines.append(f"      %d{n} = llvm.addrspacecast %o{n} : !llvm.ptr<3> to !llvm.ptr<7>\n")
    lines += [f"      %x{n}_{i} = llvm.mlir.constant({c} : i32) : i32\n" for i, c in enumerate(coords)]
    box = ", ".join(f"%x{n}_{i}" for i in range(len(coords)))
    tail = ""
    if mask is not None:
        lines.append(f"      %m{n} = llvm.mlir.constant({mask} : i16) : i16\n")
        tail += f" multicast_mask = %m{n}"
    if form.hint:
        lines.append(f"      %h{n} = llvm.mlir.constant(1152921504606846976 : i64) : i64\n")
        tail += f" l2_cache_hint = %h{n}"
    if form.predicate is not None:
        # (a value, not a constant: llc-22 prints an i1 constant in upstream's inline PTX as `@-1`)
        lines.append(f'      %p{n} = llvm.icmp "{"eq" if form.predicate else "ne"}" %tid, %c0 : i32\n')
        tail += f" predicate = %p{n}"
    attrs: list[str] = []
    if form.cta_only:
        attrs.append("isCTAOnly = true")
    if form.group is not None:
        attrs.append(f"group = #nvvm.cta_group<cta_{form.group}>")
    if attrs:
        tail += " {" + ", ".join(attrs) + "}"
    space = "<3>" if form.cta_only else "<7>"
    lines.append(f"      nvvm.cp.async.bulk.tensor.shared.cluster.global %d{n}, %{tmap}, %bar, box[{box}]{tail}"
                 f" : !llvm.ptr{space}, !llvm.ptr\n")  # fmt: skip
    return "".join(lines)


def tensor_store(
    tmap: str, coords: Sequence[int], src: int, reduction: str | None = None, predicate: bool | None = None
) -> str:
    """A tensor store (or reduction) of the box at shared byte `src` to `coords` (a store
    may take a predicate, as `LoadForm`'s)."""
    n = f"{tmap}_{src}_%K"
    lines = [f"      %o{n} = llvm.getelementptr %s[{src}] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8\n"]
    lines += [f"      %x{n}_{i} = llvm.mlir.constant({c} : i32) : i32\n" for i, c in enumerate(coords)]
    box = ", ".join(f"%x{n}_{i}" for i in range(len(coords)))
    guard = ""
    if predicate is not None:
        lines.append(f'      %p{n} = llvm.icmp "{"eq" if predicate else "ne"}" %tid, %c0 : i32\n')
        guard = f", predicate = %p{n}"
    if reduction is None:
        lines.append(f"      nvvm.cp.async.bulk.tensor.global.shared.cta %{tmap}, %o{n}, box[{box}]{guard}"
                     " : !llvm.ptr, <3>\n")  # fmt: skip
    else:
        lines.append(f"      nvvm.cp.async.bulk.tensor.reduce %{tmap}, %o{n}, box[{box}] "
                     f"{{redKind = #nvvm.tma_redux_kind<{reduction}>}} : !llvm.ptr, <3>\n")  # fmt: skip
    return "".join(lines)


def bulk_groups(read: bool) -> str:
    wait = "      nvvm.cp.async.bulk.wait_group 0" + (" {read}" if read else "")
    return "      nvvm.cp.async.bulk.commit.group\n" + wait + "\n"
