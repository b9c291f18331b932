"""NVVM-level TMA test programs (tests/test_nvvm_tma_run.py): one CTA (or a cluster) fills its
shared buffer with 0xA5, thread 0 issues the copies the test names, every thread waits on the
mbarrier and copies the shared buffer verbatim to `out` (so `out` is the exact shared image)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TMAP = "!llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}"
THREADS = 128


@dataclass(frozen=True)
class Load:
    """A tensor load of the box at `coords` of tensor map `tmap` to shared byte `dst`."""

    tmap: str
    coords: Sequence[int]
    dst: int
    mask: int | None = None


def _i32(name: str, value: int) -> str:
    return f"    %{name} = llvm.mlir.constant({value} : i32) : i32\n"


def load_op(n: int, load: Load) -> str:
    """The text of a tensor load (`%d{n}` its destination)."""
    lines = [f"      %o{n} = llvm.getelementptr %s[{load.dst}] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8\n",
             f"      %d{n} = llvm.addrspacecast %o{n} : !llvm.ptr<3> to !llvm.ptr<7>\n"]  # fmt: skip
    for k, c in enumerate(load.coords):
        lines.append(f"      %x{n}_{k} = llvm.mlir.constant({c} : i32) : i32\n")
    box = ", ".join(f"%x{n}_{k}" for k in range(len(load.coords)))
    mask = ""
    if load.mask is not None:
        lines.append(f"      %m{n} = llvm.mlir.constant({load.mask} : i16) : i16\n")
        mask = f" multicast_mask = %m{n}"
    lines.append(f"      nvvm.cp.async.bulk.tensor.shared.cluster.global %d{n}, %{load.tmap}, %bar, box[{box}]{mask}"
                 " : !llvm.ptr<7>, !llvm.ptr\n")  # fmt: skip
    return "".join(lines)


def program(
    tmaps: Sequence[str], smem_bytes: int, issue: str, expect_tx: int, cluster: int = 1, issuers: Sequence[int] = (0,)
) -> str:
    """Kernel @k(tmaps..., %out): `issue` (ops run by thread 0 of each CTA in `issuers`,
    after `mbarrier.arrive.expect_tx %bar, expect_tx` in every CTA)."""
    params = ", ".join([f"%{t}: {TMAP}" for t in tmaps] + ["%out: !llvm.ptr<1>"])
    attrs = f"nvvm.kernel, nvvm.reqntid = array<i32: {THREADS}>"
    if cluster > 1:
        attrs += f", nvvm.cluster_dim = array<i32: {cluster}, 1, 1>"
    sync = "    nvvm.cluster.arrive\n    nvvm.cluster.wait\n" if cluster > 1 else "    nvvm.barrier0\n"
    words = smem_bytes // 4
    rank = "    %rank = nvvm.read.ptx.sreg.cluster.ctarank : i32\n" if cluster > 1 else _i32("rank", 0)
    issuing = " || ".join(str(i) for i in issuers)
    conditions = "".join(f"    %is{i} = llvm.icmp \"eq\" %rank, %r{i} : i32\n" for i in issuers)
    consts = "".join(_i32(f"r{i}", i) for i in issuers)
    either = f"%is{issuers[0]}"
    for i in issuers[1:]:
        conditions += f"    %or{i} = llvm.or {either}, %is{i} : i1\n"
        either = f"%or{i}"
    del issuing
    return f"""module {{
  llvm.mlir.global internal @smem() {{addr_space = 3 : i32, alignment = 1024 : i64}} : !llvm.array<{smem_bytes} x i8>
  llvm.mlir.global internal @bar() {{addr_space = 3 : i32, alignment = 8 : i64}} : !llvm.array<1 x i64>
  llvm.func @k({params}) attributes {{{attrs}}} {{
    %tid = nvvm.read.ptx.sreg.tid.x : i32
{rank}{_i32("c0", 0)}{_i32("c1", 1)}{_i32("nt", THREADS)}{_i32("words", words)}{_i32("fill", -1515870811)}{_i32("tx", expect_tx)}{consts}    %s = llvm.mlir.addressof @smem : !llvm.ptr<3>
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %first = llvm.icmp "eq" %tid, %c0 : i32
{conditions}    scf.for %k = %tid to %words step %nt : i32 {{
      %p = llvm.getelementptr %s[%k] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
      llvm.store %fill, %p : i32, !llvm.ptr<3>
    }}
    scf.if %first {{
      nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
      nvvm.fence.proxy {{kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}}
    }}
{sync}    scf.if %first {{
      nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32
      %issues = llvm.and %first, {either} : i1
      scf.if %issues {{
{issue}      }}
    }}
    nvvm.mbarrier.try_wait.parity %bar, %c0, %c0 : !llvm.ptr<3>, i32, i32
    scf.for %k = %tid to %words step %nt : i32 {{
      %p = llvm.getelementptr %s[%k] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
      %v = llvm.load %p : !llvm.ptr<3> -> i32
      %w = llvm.mul %rank, %words : i32
      %j = llvm.add %w, %k : i32
      %q = llvm.getelementptr %out[%j] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %v, %q : i32, !llvm.ptr<1>
    }}
{sync}    llvm.return
  }}
}}
"""
