"""Structure counts of the package (issue 28): functions over 80 lines, public functions over 12 parameters,
string tests of `model.kind`, and lines over 100 characters.

A function's length is counted without its docstring (the export writes numpydoc sections into docstrings).
`python tools/check_structure.py` prints the counts and each offender; `tests/test_structure.py` asserts them.
"""
import ast, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attnstat"
MAX_LINES, MAX_PARAMS, MAX_KIND_TESTS, MAX_WIDTH = 80, 12, 5, 100
EXEMPT_PARAMS = ("attnstat/cli.py",)   # click commands take one parameter per option

def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "_modidx.py")

def _doc_lines(node) -> int:
    "Lines of a function's docstring (0 when it has none)."
    b = node.body[0] if node.body else None
    if isinstance(b, ast.Expr) and isinstance(getattr(b, "value", None), ast.Constant) and isinstance(b.value.value, str):
        return b.end_lineno - b.lineno + 1
    return 0

def long_functions(path: Path) -> list:
    "[(qualified name, lines without the docstring)] of the functions of `path` over MAX_LINES."
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1 - _doc_lines(node)
            if n > MAX_LINES: out.append((node.name, n))
    return out

def wide_signatures(path: Path) -> list:
    "[(name, parameters)] of the public top-level functions and public methods over MAX_PARAMS (self, *args, **kw aside)."
    out = []
    tree = ast.parse(path.read_text())
    nodes = [(n, n.name) for n in tree.body if isinstance(n, ast.FunctionDef)]
    nodes += [(m, f"{c.name}.{m.name}") for c in tree.body if isinstance(c, ast.ClassDef) and not c.name.startswith("_")
              for m in c.body if isinstance(m, ast.FunctionDef)]
    for node, name in nodes:
        if node.name.startswith("_") and node.name != "__init__": continue
        a = node.args
        n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) - (1 if a.args and a.args[0].arg in ("self", "cls") else 0)
        if n > MAX_PARAMS: out.append((name, n))
    return out

KIND = re.compile(r"""\.kind\s*(?:==|!=|\bin\b|\bis\b)|(?:==|!=)\s*\w+\.kind\b""")

def kind_tests(path: Path) -> list:
    "[(line number, text)] of the string tests of a model's `kind` (`model.kind == 'spiked'`, ...)."
    out = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split("#", 1)[0]
        if KIND.search(code) and "dtype.kind" not in code and "p.kind" not in code and ".kind is p." not in code:
            out.append((i, line.strip()))
    return out

def wide_lines(path: Path) -> list:
    return [i for i, line in enumerate(path.read_text().splitlines(), 1) if len(line) > MAX_WIDTH]

def report() -> dict:
    rel = lambda p: str(p.relative_to(ROOT))
    res = {"long_functions": [], "wide_signatures": [], "kind_tests": [], "wide_lines": []}
    for p in modules():
        res["long_functions"] += [(rel(p), n, k) for n, k in long_functions(p)]
        if rel(p) not in EXEMPT_PARAMS: res["wide_signatures"] += [(rel(p), n, k) for n, k in wide_signatures(p)]
        res["kind_tests"] += [(rel(p), i, t) for i, t in kind_tests(p)]
        res["wide_lines"] += [(rel(p), i) for i in wide_lines(p)]
    return res

if __name__ == "__main__":
    r = report()
    for key, items in r.items():
        print(f"{key}: {len(items)}")
        if key != "wide_lines" or "-v" in sys.argv:
            for it in items: print("   ", *it)
