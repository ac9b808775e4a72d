"""Statistical theory of attention: single-location regression and random-matrix interpolation error

Modules:

- `attnstat.book.figures`: Every figure of the book, regenerated: a registry of sweep recipes (points, a compute function, a plot function) that `reproduce` runs through `run_sweep` into CSV, PNG and PDF files, and the chapters' own figure cells rerun from their cached data; `attnstat reproduce` calls `reproduce_book`.
- `attnstat.weights`: Loaders for the query and key matrices of BERT-family and GPT-2 checkpoints (safetensors and numpy only), the fit $W_K^\top W_Q \approx \alpha_I I + \Gamma_j$, the all-MiniLM-L6-v2 analysis, and the interpolation error predicted from the fitted weights against a simulation with the real matrix."""

__version__ = "0.1.0"

# the one place notebooks find shipped data and write recomputed data (nbs/00f_data.ipynb)
from .data import data_folder, data_path, recompute_requested

__all__ = ["__version__", "data_folder", "data_path", "recompute_requested"]
