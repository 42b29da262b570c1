"""fgx: a Snakemake reproduction of 'From f(x) and g(x) to f(g(x))' (arXiv 2509.25123)."""

__version__ = "0.1.0"
