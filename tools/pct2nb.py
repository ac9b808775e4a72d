"""Convert a percent-format text file into a clean notebook with stable cell ids.

Usage: python tools/pct2nb.py SOURCE.pct nbs/NAME.ipynb

Cells start with a line `# %%` (code) or `# %% [markdown]` (Markdown, written as plain
Markdown, not commented out). Cell ids are derived from the notebook name and the cell
index, so regenerating a notebook does not churn ids. The notebook in `nbs/` is the source
of truth; this tool only helps to author it.
"""
import hashlib, json, re, sys
from pathlib import Path

def cells_from_text(text):
    cells, kind, buf = [], None, []
    for line in text.splitlines():
        m = re.match(r"^# %%(\s*\[markdown\])?\s*$", line)
        if m:
            if kind is not None: cells.append((kind, buf))
            kind, buf = ("markdown" if m.group(1) else "code"), []
        else:
            if kind is None: continue
            buf.append(line)
    if kind is not None: cells.append((kind, buf))
    return [(k, "\n".join(b).strip("\n")) for k, b in cells]

def to_notebook(cells, name):
    out = []
    for i, (kind, src) in enumerate(cells):
        cid = hashlib.sha1(f"{name}:{i}".encode()).hexdigest()[:8]
        lines = src.splitlines(keepends=True)
        cell = {"cell_type": kind, "id": cid, "metadata": {}, "source": lines}
        if kind == "code": cell.update(execution_count=None, outputs=[])
        out.append(cell)
    return {"cells": out,
            "metadata": {"kernelspec": {"display_name": "python3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}

if __name__ == "__main__":
    src, dst = map(Path, sys.argv[1:3])
    nb = to_notebook(cells_from_text(src.read_text()), dst.stem)
    dst.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {dst} ({len(nb['cells'])} cells)")
