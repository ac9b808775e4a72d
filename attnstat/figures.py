"""The former name of `attnstat.book.figures` (kept for one release): new code imports
`attnstat.book.figures`."""
# Hand-written, not exported: nbdev's `#| export figures` appends a notebook's cells to an existing
# module at every export, so this stub is kept here (nbs/05c_figures.ipynb tests it, cell figshim2).
from .book.figures import *
from .book.figures import __all__  # noqa: F401
