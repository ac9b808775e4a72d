"""Build the attnstat book offline: notebooks in nbs/ -> Jupyter Book 1 HTML in book/_build/html.

Steps
1. Assemble `_book/` at the repository root (same depth as `nbs/`, so a notebook's relative paths
   such as `../data/x.csv` work unchanged): `book/_config.yml`, `book/_toc.yml`, `book/_static/`,
   the local browser assets from `book/node_modules` (MathJax 3, the ipywidgets embedder) and the
   notebooks converted for MyST-NB.
2. Convert nbdev directives to MyST-NB cell tags and strip the directive lines:
   `hide`, `default_exp` -> remove-cell; `echo: false` -> remove-input; `eval: false`, `slow` ->
   shown but not executed (skip-execution); `export*` -> shown; `notest` -> executed.
3. `jupyter-book build _book --path-output book -W --keep-going`: notebooks are executed (with a
   jupyter-cache, so a second build only re-runs changed notebooks); an error fails the build.
4. Check that every notebook in nbs/ is in the table of contents and that the HTML references no
   off-site script, style or font.
"""
import json, re, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK, STAGE, NBS = ROOT / "book", ROOT / "_book", ROOT / "nbs"
OUT = BOOK / "_build" / "html"
DIRECTIVE = re.compile(r"^\s*#\|\s*(.*?)\s*$")

def cell_tags(cell):
    "Turn the nbdev directives of a code cell into MyST-NB tags; strip the directive lines."
    src = "".join(cell["source"]).splitlines(keepends=True)
    keep, tags = [], []
    for line in src:
        m = DIRECTIVE.match(line)
        if not m: keep.append(line); continue
        d = m.group(1).replace(" ", "").lower()
        if d.startswith("default_exp") or d == "hide": tags.append("remove-cell")
        elif d == "echo:false": tags.append("remove-input")
        elif d in ("eval:false", "slow"): tags.append("skip-execution")
        elif d == "output:false": tags.append("remove-output")
    while keep and not keep[0].strip(): keep.pop(0)
    if not "".join(keep).strip() and "remove-cell" not in tags: tags.append("remove-cell")
    return "".join(keep), tags

def convert(src: Path, dst: Path):
    nb = json.loads(src.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code": continue
        source, tags = cell_tags(cell)
        cell["source"] = source
        cell["outputs"], cell["execution_count"] = [], None
        if tags: cell.setdefault("metadata", {})["tags"] = sorted(set(tags))
    dst.write_text(json.dumps(nb, indent=1))

def toc_files(toc: Path):
    return set(re.findall(r"file:\s*(\S+)", toc.read_text()) + re.findall(r"root:\s*(\S+)", toc.read_text()))

def copy_assets(static: Path):
    nm = BOOK / "node_modules"
    embed = nm / "@jupyter-widgets" / "html-manager" / "dist"
    mj = nm / "mathjax" / "es5"
    if not (embed / "embed.js").exists() or not (mj / "tex-mml-chtml.js").exists():
        sys.exit("book/node_modules is missing: run `npm ci --prefix book` first (make book does)")
    for f in embed.iterdir():
        if f.suffix in (".map",) or "amd" in f.name or f.name.endswith(".txt"): continue
        shutil.copy2(f, static / f.name)
    shutil.copytree(mj, static / "mathjax", dirs_exist_ok=True)

def check_offline(html_dir: Path):
    "Fail if a built page loads a script, style or font from another site."
    bad = []
    pat = re.compile(r"<(script|link)\b[^>]*?\b(src|href)\s*=\s*[\"'](https?:)?//[^\"']+", re.I)
    for page in html_dir.rglob("*.html"):
        for m in pat.finditer(page.read_text(errors="ignore")):
            tag = m.group(0)
            if m.group(1).lower() == "link" and not re.search(r"stylesheet|preload|icon|font", tag, re.I): continue
            bad.append(f"{page.relative_to(html_dir)}: {tag[:120]}")
    for css in html_dir.rglob("*.css"):
        for m in re.finditer(r"url\(\s*[\"']?(https?:)?//[^)\"']+", css.read_text(errors="ignore")):
            bad.append(f"{css.relative_to(html_dir)}: {m.group(0)[:120]}")
    return bad

def main():
    if STAGE.exists():
        for p in STAGE.iterdir():
            if p.name != "_build": (shutil.rmtree if p.is_dir() else Path.unlink)(p)
    STAGE.mkdir(exist_ok=True)
    for name in ("_config.yml", "_toc.yml", "references.bib"):
        if (BOOK / name).exists(): shutil.copy2(BOOK / name, STAGE / name)
    static = STAGE / "_static"
    if (BOOK / "_static").exists(): shutil.copytree(BOOK / "_static", static, dirs_exist_ok=True)
    static.mkdir(exist_ok=True)
    copy_assets(static)
    notebooks = sorted(p for p in NBS.glob("*.ipynb") if not p.name.startswith("_"))
    listed = toc_files(STAGE / "_toc.yml")
    missing = [p.stem for p in notebooks if p.stem not in listed]
    if missing and "--partial" not in sys.argv:
        sys.exit(f"notebooks missing from book/_toc.yml: {missing} (--partial builds the listed ones only)")
    for p in notebooks:
        if p.stem in listed: convert(p, STAGE / p.name)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(STAGE), "--path-output", str(BOOK), "-W", "--keep-going"]
    if "--all" in sys.argv: cmd.insert(2, "--all")
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd)
    if r.returncode: sys.exit(f"jupyter-book build failed (exit {r.returncode}); see the log above")
    bad = check_offline(OUT)
    if bad: sys.exit("off-site assets in the built HTML:\n" + "\n".join(bad))
    print(f"book written to {OUT.relative_to(ROOT)}/index.html (no off-site scripts, styles or fonts)")

if __name__ == "__main__":
    main()
