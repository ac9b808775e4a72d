"""Export the notebooks to attnstat/: the one export command (`make export`).

    python tools/export.py          # nbdev-export, then wrap nbdev's __all__ lists at 100 columns

1. `nbdev-export` writes the modules. Its export processor `attnstat.docs.DocstringProc` (named in
   pyproject.toml, `[tool.nbdev] export_procs`) writes the numpydoc `Parameters`/`Returns` sections,
   from the docments comments, into the exported docstrings, so `help()` shows them with nothing done
   at import (nbs/00g_docs.ipynb).
2. nbdev writes each module's `__all__` wrapped at 120 columns and has no setting for it; the
   project's line length is 100 (ruff E501, pyproject.toml `[tool.ruff]`), so the lists are wrapped
   again here, names and order unchanged.

`tools/check_export.py` (CI's sync check) runs this and compares attnstat/ before and after.
"""
from __future__ import annotations
import ast, subprocess, sys, textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "attnstat"
WIDTH = 100

def wrap_all(text: str, width: int = WIDTH) -> str:
    "`text` (a module) with its top-level `__all__ = [...]` of string literals wrapped at `width` columns."
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    for node in reversed(tree.body):
        if not (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]
                and isinstance(node.value, ast.List)
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts)):
            continue
        names = [e.value for e in node.value.elts]
        new = "\n".join(textwrap.wrap("__all__ = " + repr(names), width, subsequent_indent=" " * 11,
                                      break_long_words=False, break_on_hyphens=False)) + "\n"
        old = "".join(lines[node.lineno - 1:node.end_lineno])
        if old.rstrip("\n") != new.rstrip("\n") and max(map(len, old.splitlines())) > width:
            lines[node.lineno - 1:node.end_lineno] = [new]
    return "".join(lines)

def export(root: Path = ROOT) -> list[str]:
    "Run nbdev-export in `root`, then wrap the `__all__` lists; the modules whose `__all__` was rewrapped."
    subprocess.run([str(Path(sys.executable).parent / "nbdev-export")], cwd=root, check=True)
    wrapped = []
    for f in sorted((root / "attnstat").rglob("*.py")):
        if f.name == "_modidx.py": continue
        text = f.read_text(encoding="utf-8")
        new = wrap_all(text)
        if new != text:
            f.write_text(new, encoding="utf-8"); wrapped.append(f.relative_to(root).as_posix())
    return wrapped

if __name__ == "__main__":
    done = export()
    print(f"exported nbs/ to attnstat/ ({len(done)} __all__ lists wrapped at {WIDTH} columns)")
