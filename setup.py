"""Build hook: ship the cached data of `data/` inside the package, as `attnstat/data/` (see nbs/00f_data.ipynb).

Everything else is configured in pyproject.toml. The repository keeps the data in `data/` (the notebooks'
slow cells refresh it there); a wheel carries a copy, found by `attnstat.data_path`.
"""
import shutil
from pathlib import Path
from setuptools import setup
from setuptools.command.build_py import build_py

DATA_SUFFIXES = {".csv", ".json", ".npz"}

class build_py_with_data(build_py):
    "build_py, then copy data/**/*.{csv,json,npz} to attnstat/data/ in the build folder."
    def run(self):
        super().run()
        src = Path(__file__).resolve().parent / "data"
        if not src.is_dir(): return
        dst = Path(self.build_lib) / "attnstat" / "data"
        for f in sorted(src.rglob("*")):
            if f.is_file() and f.suffix in DATA_SUFFIXES:
                out = dst / f.relative_to(src)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, out)

setup(cmdclass={"build_py": build_py_with_data})
