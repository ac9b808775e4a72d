"""Check that the package is in sync with the notebooks: run nbdev-export and compare attnstat/.

With CI=true a difference is an error (the committed package was stale); otherwise the package
is refreshed and the difference reported.
"""
import hashlib, os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "attnstat"

def snapshot():
    return {p.relative_to(LIB).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(LIB.rglob("*.py"))}

before = snapshot()
subprocess.run([str(Path(sys.executable).parent / "nbdev-export")], cwd=ROOT, check=True)
after = snapshot()
changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
if changed:
    msg = "nbdev-export changed attnstat/: " + ", ".join(changed)
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        sys.exit(msg + "\nThe committed package is out of sync with nbs/: run nbdev-export and commit.")
    print(msg + " (refreshed; commit the result)")
else:
    print("attnstat/ is in sync with nbs/")
