"""xdsl-tmem: a compiler, interpreter and verifier for Blackwell TMEM accumulator pipelines."""

__version__ = "0.1.0"
