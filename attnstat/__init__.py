__version__ = "0.1.0"

# the one place notebooks find shipped data and write recomputed data (nbs/00f_data.ipynb)
from .data import data_path, data_folder, recompute_requested

# help() shows each parameter: the docments comments of the source become numpydoc sections at import (nbs/00g_docs.ipynb)
from .docs import install as _install_docs
_install_docs()
