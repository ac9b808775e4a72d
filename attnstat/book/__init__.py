"""The book's machinery, kept out of the science API (`attnstat.slr`, `attnstat.rmt`).

The figure registry and `reproduce` (`figures`), the figures' visual code and legibility (`style`),
the chapters' cached tables (`slr_tables`, `slr_positional`) and the parameter grids, runners and
loaders of their cached simulations (`rmt_vs_ridge`, `rmt_generalisation`, `rmt_multihead_data`),
each cache an entry of the store (`attnstat.store`) keyed by the full parameters that made it."""
