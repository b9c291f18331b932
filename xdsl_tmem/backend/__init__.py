"""The PTX backend: instruction selection to the `ptx` dialect, PTX text, ptxas."""
