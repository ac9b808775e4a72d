"""Build hook: ship the cached data of `data/` and the book's notebooks of `nbs/` inside the package,
as `attnstat/data/` (see nbs/00f_data.ipynb) and `attnstat/_notebooks/` (see nbs/05c_figures.ipynb).

Everything else is configured in pyproject.toml. The repository keeps the data in `data/` (the notebooks'
slow cells refresh it there) and the chapters in `nbs/`; a wheel carries a copy of both, found by
`attnstat.data_path` and by `attnstat reproduce` (which reruns a chapter's figure cells from its cached data).
"""
import shutil
from pathlib import Path
from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA_SUFFIXES = {".csv", ".json", ".npz"}

def copy_tree(src: Path, dst: Path, keep) -> int:
    "Copy the files of `src` (recursively) for which `keep(path)` holds to `dst`; how many."
    n = 0
    for f in sorted(src.rglob("*")):
        if f.is_file() and keep(f):
            out = dst / f.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, out)
            n += 1
    return n

def is_chapter(f: Path) -> bool:
    "A notebook of the book (nbs/*.ipynb, top level; not a scratch `_x.ipynb` or checkpoint)."
    return f.suffix == ".ipynb" and f.parent.name == "nbs" and not f.name.startswith(("_", "."))

class build_py_with_data(build_py):
    "build_py, then copy data/**/*.{csv,json,npz} to attnstat/data/ and nbs/*.ipynb to attnstat/_notebooks/."
    def run(self):
        super().run()
        pkg = Path(self.build_lib) / "attnstat"
        if (ROOT / "data").is_dir():
            copy_tree(ROOT / "data", pkg / "data", lambda f: f.suffix in DATA_SUFFIXES)
        if (ROOT / "nbs").is_dir():
            copy_tree(ROOT / "nbs", pkg / "_notebooks", is_chapter)

setup(cmdclass={"build_py": build_py_with_data})
