"""The dialects of xdsl-tmem: `tmem` (Mojo pipeline semantics) and `nvvm` (upstream MLIR 22)."""
