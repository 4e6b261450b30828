"""fusionviz: explore how PyTorch Inductor fuses a program into kernels."""

__version__ = "0.1.0"
