"""The upstream MLIR/LLVM 22 tools (the external oracles): `xdsl_tmem.tools.upstream`,
which `xdsl-tmem-run --validate-lowering` uses too, under the names the tests import."""

from xdsl_tmem.tools.upstream import LLVM_MAJOR, UPSTREAM_LOWERING, ToolFailed, Upstream, find_llvm_tool, run_tool

__all__ = ["LLVM_MAJOR", "UPSTREAM_LOWERING", "ToolFailed", "Upstream", "find_llvm_tool", "run_tool"]
