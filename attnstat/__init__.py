"""Statistical theory of attention: single-location regression, random-matrix interpolation error.

Modules:

- `attnstat.book`: The book's machinery, kept out of the science API (`attnstat.slr`,
  `attnstat.rmt`).
- `attnstat.book.figures`: Every figure of the book, regenerated: a registry of sweep recipes
  (points, a compute function, a plot function) that `reproduce` runs through `run_sweep` into CSV,
  PNG and PDF files, and the chapters' own figure cells rerun from their cached data; `attnstat
  reproduce` calls `reproduce_book`.
- `attnstat.book.rmt_generalisation`: The book's machinery that cells of
  nbs/03e_rmt_generalisation.ipynb export to `book.rmt_generalisation`.
- `attnstat.book.rmt_multihead_data`: The book's machinery that cells of nbs/03f_rmt_multihead.ipynb
  export to `book.rmt_multihead_data`.
- `attnstat.book.rmt_vs_ridge`: The book's machinery that cells of nbs/03d_rmt_vs_ridge.ipynb export
  to `book.rmt_vs_ridge`.
- `attnstat.book.slr_positional`: The book's machinery that cells of nbs/01f_slr_positional.ipynb
  export to `book.slr_positional`.
- `attnstat.book.slr_tables`: The book's machinery that cells of nbs/02b_slr_finite_samples.ipynb
  export to `book.slr_tables`.
- `attnstat.book.style`: One helper for every figure: status line styles, legible text, alt text
  from the plotted data.
- `attnstat.cli`: `attnstat slr ...`, `attnstat rmt ...` and `attnstat reproduce`: the public API
  from the shell, with plain text or `--json` output, one-line errors, and the recomputation of
  every book figure.
- `attnstat.core`: Parameter checks that name the parameter and its range, seeded random generators,
  the exceptions and the result base shared by every solver in attnstat.
- `attnstat.data`: One function, `data_path`, finds the cached data shipped with attnstat and says
  where recomputed data are written.
- `attnstat.docs`: A small docments parser (the comments after each parameter in a signature), the
  numpydoc `Parameters` sections it writes into the exported modules' docstrings, and the data of
  the book's API reference.
- `attnstat.figures`: The former name of `attnstat.book.figures` (kept for one release): new code
  imports `attnstat.book.figures`.
- `attnstat.fixed_point`: One damped iteration for every self-consistent equation in attnstat, with
  the residual measured on the undamped map over all unknowns, explicit tolerances, a result object
  and continuation over a parameter.
- `attnstat.gaussian`: One toolkit for every Gaussian integral in attnstat: Gauss–Hermite rules in
  one and two dimensions with an order-doubling self-check, adaptive quadrature with breakpoints for
  kinked integrands, and Monte Carlo means with their standard errors.
- `attnstat.interactive`: `precomputed_figure` draws a figure for every point of a parameter grid
  and lets sliders pick among them in the browser, so the figures of the static book stay
  interactive with no Python running, and stay live in Jupyter.
- `attnstat.report`: Results shown as formatted tables and sentences, never as object reprs.
- `attnstat.rmt`: The interpolation error of a ridge readout on nonlinear attention, against ridge
  regression on the raw tokens, by random matrix theory: Hermite linearisation, a deterministic
  equivalent, and simulations.
- `attnstat.rmt.generalisation`: The readout fitted on the context, tested on a token it has not
  seen: the deterministic equivalent of the test error of nonlinear attention and of ridge
  regression, checked against simulation, and what it says about attention's advantage or
  disadvantage.
- `attnstat.rmt.hermite`: The Hermite coefficients $a_0, a_1, a_2, a_3$, $\\lVert f\\rVert^2 =
  \\mathbb E f^2$ and $\\tau^2 = \\lVert f\\rVert^2 - a_1^2$ of an activation, what each of them
  does in the attention kernel, and a registry of the named activations of the attention chapters.
- `attnstat.rmt.models`: Signal-plus-noise tokens, identity-plus-low-rank key–query weights, the
  nonlinear attention kernel, what its Gaussian equivalent keeps and drops, and the empirical
  interpolation errors of attention and ridge regression.
- `attnstat.rmt.multihead`: H heads and a residual connection, the future work of paper 2: what adds
  and what stacks in a sum of kernels, the 2H × 2H Woodbury assembly, the sum and concatenated
  residual readouts, simulations of the real kernels, and whether they change the verdict against
  ridge regression.
- `attnstat.rmt.strong_signal`: Aligned weights make the score's signal part large at realistic p: a
  finite-p theory, checked.
- `attnstat.rmt.sweeps`: Where nonlinear attention interpolates worse or better than ridge
  regression on the same tokens, whether the answer survives a fair choice of the regularisation,
  and each claim of the paper checked: theory as lines, cached simulations as markers.
- `attnstat.rmt.theory`: From the attention model to a formula: the interpolation error as a
  resolvent, the linear pencil and its three self-consistent equations, the spiked Marchenko–Pastur
  rules that carry the signal, the ridge baseline in closed form, and the limits γ → 0, c → 0 and c
  → ∞, each derivation followed by its numerical check.
- `attnstat.slr`: Single-location regression (SLR): data models, attention predictors, population
  risk, Bayes risk and the replica theory of empirical risk minimisation, after Duranthon, Marion,
  Boyer, Loureiro and Zdeborová (arXiv:2509.21936).
- `attnstat.slr.activations`: The attention predictor σ(Xk/√D)ᵀ(Xv/√D), its activations and
  Jacobians, and their registry.
- `attnstat.slr.amp`: Generalised approximate message passing with 2×2 variances on the L × 2 token
  fields of each sequence, its state evolution, and a simulation that measures the test error of the
  Bayes estimator.
- `attnstat.slr.bayes`: The Nishimori equations of single-location regression, their two branches,
  the free entropy that picks the equilibrium, and the phase diagram in the sample ratio α.
- `attnstat.slr.dynamics`: Gradient flow and online SGD reduced exactly to the overlaps, the
  stability of the aligned manifold, and what gradient methods actually reach
- `attnstat.slr.models`: Spiked-SLR and max-SLR with fixed or random sequence length: samplers of
  the low-dimensional projections for Monte Carlo and of full D-dimensional token arrays with
  padding masks, and the posterior over the hidden location.
- `attnstat.slr.multihead`: Several heads on multi-feature SLR: sink-softmax Bayes heads,
  specialisation, escape laws.
- `attnstat.slr.population`: With infinitely many samples, which attention can represent the Bayes
  predictor? The population risk as a function of seven overlaps, its reduction by symmetry, the
  Laplace identity that makes it computable at any length, the posterior over the location, the
  Bayes risk, the Nishimori identity, and why softmax reaches the Bayes risk while linear, erf and
  softplus cannot.
- `attnstat.slr.positional`: A location prior and position-dependent signal strengths in spiked-SLR,
  a positional bias in max-SLR: the Bayes risk through a Laplace identity for non-exchangeable
  tokens, softmax attention with a learnable positional bias (and a per-position gain), and what
  linear attention with positional weights can and cannot do.
- `attnstat.slr.replica`: The numerical solution of the replica-symmetric equations of ridge
  square-loss ERM for an attention head at finite sample ratio α = N/D: a vectorised Newton prox,
  randomised quasi-Monte Carlo integration with an honest error, and the stability of the
  replica-symmetric fixed point.
- `attnstat.slr.simulate`: ERM by L-BFGS on the actual D-dimensional objective, sweeps with caching,
  and the comparison of replica theory, simulation and the finite-α Bayes-optimal error.
- `attnstat.slr.tuning`: Ridge ERM at the λ minimising the replica test error, against fixed λ and
  the Bayes optimum.
- `attnstat.store`: One embedded SQLite file holds every computed table of attnstat: each entry
  keyed by the full parameters that made it, every commit one transaction, several processes writing
  at once.
- `attnstat.sweep`: Every sweep of attnstat goes through `run_sweep`: joblib processes on one
  machine or a Dask cluster, a progress bar with an ETA, and a CSV cache that records the
  parameters, package version and seed and resumes an interrupted sweep.
- `attnstat.testing`: `test_eq`, `test_close`, `test_fail`, `expect_fail`, `test_warns` and
  `examples`, shipped with the package so the notebooks run on `pip install attnstat` alone.
- `attnstat.weights`: Loaders for the query and key matrices of BERT-family and GPT-2 checkpoints
  (safetensors and numpy only), the fit $W_K^\\top W_Q \\approx \\alpha_I I + \\Gamma_j$, the
  all-MiniLM-L6-v2 analysis, and the interpolation error predicted from the fitted weights against a
  simulation with the real matrix."""

__version__ = "0.1.0"

# the one place notebooks find shipped data and write recomputed data (nbs/00f_data.ipynb)
from .data import data_folder, data_path, recompute_requested

__all__ = ["__version__", "data_folder", "data_path", "recompute_requested"]
