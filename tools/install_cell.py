"""Give every notebook with code a first code cell that installs attnstat when it is missing (Binder, Colab).

    python tools/install_cell.py            # add or refresh the cell in nbs/*.ipynb
    python tools/install_cell.py --check    # exit 1 naming the notebooks whose cell is missing or stale

The cell (id `install-attnstat`, `#| hide`: removed from the book, run by the tests as a no-op) sits right
after the title cell. It pip-installs `attnstat[interactive]` (the kernel it runs in is already there, so of
the `book` extra only ipywidgets is missing) from the repository URL of pyproject.toml
([project.urls] Repository, the one place the URL is written) only when `import attnstat` would fail and
neither `IN_TEST` (set by nbdev-test) nor `ATTNSTAT_NO_INSTALL` (set by the book build) is set. In
notebooks with recompute cells it also says how to run them (`ATTNSTAT_RECOMPUTE=1`).
"""
import json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CELL_ID = "install-attnstat"

def repository_url(root: Path = ROOT) -> str:
    "pyproject.toml [project.urls] Repository."
    text = (root / "pyproject.toml").read_text()
    block = text.split("[project.urls]", 1)[1].split("\n[", 1)[0]
    return re.search(r'^Repository\s*=\s*"([^"]+)"', block, re.M).group(1)

def has_slow_cells(nb: dict) -> bool:
    return any(c["cell_type"] == "code" and re.search(r"^\s*#\|\s*slow\s*$", "".join(c["source"]), re.M) for c in nb["cells"])

def cell_source(url: str, slow: bool) -> str:
    "The text of the install cell."
    lines = ["#| hide",
             "# Running this notebook yourself (Jupyter, Binder, Colab)? This cell installs attnstat when it is missing."]
    if slow:
        lines += ["# The cells that recompute cached data (minutes to hours) run only when the environment variable",
                  "# ATTNSTAT_RECOMPUTE=1 is set; otherwise they do nothing and the figures read the data shipped",
                  "# with attnstat (attnstat.data_path; recomputed data go to $ATTNSTAT_DATA or ~/.cache/attnstat/data)."]
    lines += ["import importlib.util, os, subprocess, sys",
              'if importlib.util.find_spec("attnstat") is None and not (os.environ.get("IN_TEST") or os.environ.get("ATTNSTAT_NO_INSTALL")):',
              f'    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "attnstat[interactive] @ git+{url}"], check=True)']
    return "\n".join(lines)

def wanted_cell(nb: dict, url: str) -> dict:
    src = cell_source(url, has_slow_cells(nb))
    return {"cell_type": "code", "execution_count": None, "id": CELL_ID, "metadata": {}, "outputs": [],
            "source": src.splitlines(keepends=True)}

def status(nb: dict, url: str):
    "(index to insert at or of the current cell, whether it exists, whether it is current); None without code cells."
    cells = nb["cells"]
    if not any(c["cell_type"] == "code" and c.get("id") != CELL_ID for c in cells): return None
    want = "".join(wanted_cell(nb, url)["source"])
    for i, c in enumerate(cells):
        if c.get("id") == CELL_ID: return i, True, "".join(c["source"]) == want
    title = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"), -1)
    return title + 1, False, False

def fix(path: Path, url: str) -> bool:
    "Add or refresh the cell in one notebook (read just before writing); True if the file changed."
    raw = path.read_text(); nb = json.loads(raw)
    st = status(nb, url)
    if st is None or st[2]: return False
    i, exists, _ = st
    if exists: nb["cells"][i]["source"] = wanted_cell(nb, url)["source"]
    else: nb["cells"].insert(i, wanted_cell(nb, url))
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return True

def check(nbs=None, url=None) -> list:
    "Notebooks whose install cell is missing or stale."
    url = url or repository_url()
    bad = []
    for p in nbs or sorted((ROOT / "nbs").glob("*.ipynb")):
        st = status(json.loads(Path(p).read_text()), url)
        if st is not None and not st[2]: bad.append(Path(p).name)
    return bad

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    paths = [Path(a) for a in args] or sorted((ROOT / "nbs").glob("*.ipynb"))
    if "--check" in sys.argv:
        bad = check(paths)
        if bad: sys.exit("install cell missing or stale (run python tools/install_cell.py): " + ", ".join(bad))
        print(f"{len(paths)} notebooks: install cells current")
    else:
        url = repository_url()
        changed = [p.name for p in paths if fix(p, url)]
        print(f"install cell added or refreshed in {len(changed)} notebook(s): {', '.join(changed) or '-'}")
