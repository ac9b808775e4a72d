"""Check that the package is in sync with the notebooks: run the export and compare attnstat/.

The export is `tools/export.py`: nbdev-export (whose export processor, attnstat.docs.DocstringProc,
writes the numpydoc sections into the docstrings), then nbdev's `__all__` lists wrapped at 100
columns. With CI=true a difference is an error (the committed package was stale); otherwise the
package is refreshed and the difference reported.
"""
import hashlib, os, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "attnstat"
sys.path.insert(0, str(ROOT / "tools"))
from export import export  # noqa: E402

def snapshot():
    return {p.relative_to(LIB).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(LIB.rglob("*.py"))}

before = snapshot()
export(ROOT)
after = snapshot()
changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
if changed:
    msg = "the export changed attnstat/: " + ", ".join(changed)
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        sys.exit(msg + "\nThe committed package is out of sync with nbs/: run `make export` "
                 "(python tools/export.py) and commit.")
    print(msg + " (refreshed; commit the result)")
else:
    print("attnstat/ is in sync with nbs/")
