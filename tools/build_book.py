"""Build the attnstat book offline: notebooks in nbs/ -> Jupyter Book 1 HTML in book/_build/html.

Steps
1. Assemble `_book/` at the repository root (same depth as `nbs/`, so a notebook's relative paths
   such as `../data/x.csv` work unchanged): `book/_config.yml`, `book/_toc.yml`, `book/references.bib`,
   `book/_static/`, the Sphinx extension `tools/book_ext.py`, the Markdown pages of nbs/ and the
   notebooks converted for MyST-NB. Browser assets come from `book/node_modules`: the ipywidgets
   embedder goes to `_static/` (its one script, `embed.js`); MathJax 3 goes to `_extra/mathjax/`,
   copied to the site root by `html_extra_path`, because Jupyter Book adds every `*.js` under
   `_static` to every page (MathJax's many component files would load six copies of it).
2. Convert the `#|` directives of code cells into MyST-NB tags and metadata, and strip every `#|` line:
   `hide`, `default_exp` -> remove-cell (the cell still runs); `export*` -> hide-input (collapsed,
   a "show code" toggle); `echo: false` -> remove-input; `output: false` -> remove-output;
   `eval: false`, `slow` -> skip-execution; `label: fig-x`, `fig-cap: ...`, `fig-alt: ...` -> a
   numbered figure with caption and alt text (`mystnb: {figure: {name, caption}, image: {alt}}`),
   referenced in Markdown as {numref}`fig-x`.
3. `jupyter-book build _book --path-output book -W --keep-going`: notebooks are executed (with a
   jupyter-cache, so a second build only re-runs changed notebooks); an error, a warning, an
   unresolved reference or a cell that writes to stderr (`nb_output_stderr: error`) fails the build.
4. Check that every notebook in nbs/ is in the table of contents, that the HTML loads nothing
   from another site (links such as the Binder and Colab launch buttons are allowed), that each
   page has exactly one MathJax script, and that no `#|` directive reached a page.

Options: `--partial` builds only the notebooks listed in the toc; `--all` rebuilds every page;
`--diagnose` runs every notebook even after one fails, to list all failures (the build still fails);
`--jobs=N` executes the notebooks that are not in the jupyter-cache N at a time before the build
(default: 2, or 1 on a one-core machine), so the build itself finds them all in the cache.
"""
import json, os, re, shutil, subprocess, sys, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK, STAGE, NBS = ROOT / "book", ROOT / "_book", ROOT / "nbs"
OUT = BOOK / "_build" / "html"
DIRECTIVE = re.compile(r"^\s*#\|\s*(.*?)\s*$")

FIG_KEYS = {"label": ("figure", "name"), "fig-cap": ("figure", "caption"), "fig-alt": ("image", "alt")}

def cell_tags(cell):
    """Turn the nbdev/Quarto directives of a code cell into MyST-NB tags and metadata; strip every `#|` line.

    Returns (source without directive lines, tags, mystnb metadata). `label`, `fig-cap` and `fig-alt`
    become `{"figure": {"name", "caption"}, "image": {"alt"}}`: a numbered, captioned figure with alt text.
    """
    src = "".join(cell["source"]).splitlines(keepends=True)
    keep, tags, meta = [], [], {}
    for line in src:
        m = DIRECTIVE.match(line)
        if not m: keep.append(line); continue
        key, _, value = m.group(1).partition(":")
        key, value = key.strip().lower(), value.strip()
        if key in FIG_KEYS and value:
            group, field = FIG_KEYS[key]
            meta.setdefault(group, {})[field] = value.strip("\"'") if field == "name" else value
            continue
        d = m.group(1).replace(" ", "").lower()
        if d.startswith("default_exp") or d == "hide": tags.append("remove-cell")
        elif d.startswith("export"): tags.append("hide-input")   # export, exports, exporti: collapsed source
        elif d == "echo:false": tags.append("remove-input")
        elif d in ("eval:false", "slow"): tags.append("skip-execution")
        elif d == "output:false": tags.append("remove-output")
    while keep and not keep[0].strip(): keep.pop(0)
    if not "".join(keep).strip() and "remove-cell" not in tags: tags.append("remove-cell")
    if "remove-cell" in tags: tags = [t for t in tags if t != "hide-input"]
    if "figure" in meta and "caption" not in meta["figure"]:
        raise ValueError(f"a cell with `#| label: {meta['figure'].get('name')}` needs a `#| fig-cap:` line")
    if meta.get("figure") and "name" not in meta["figure"]:
        raise ValueError(f"a cell with `#| fig-cap:` needs a `#| label: fig-...` line: {meta['figure']['caption'][:60]}")
    return "".join(keep), tags, meta

def convert(src: Path, dst: Path):
    nb = json.loads(src.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code": continue
        try: source, tags, meta = cell_tags(cell)
        except ValueError as e: sys.exit(f"{src.name}, cell {cell.get('id')}: {e}")
        cell["source"] = source
        cell["outputs"], cell["execution_count"] = [], None
        if tags: cell.setdefault("metadata", {})["tags"] = sorted(set(tags))
        if meta: cell.setdefault("metadata", {})["mystnb"] = meta
    dst.write_text(json.dumps(nb, indent=1))

def toc_files(toc: Path):
    return set(re.findall(r"file:\s*(\S+)", toc.read_text()) + re.findall(r"root:\s*(\S+)", toc.read_text()))

def copy_assets(static: Path, extra: Path, book: Path = BOOK):
    "The widget embedder into _static (one script), MathJax into _extra/mathjax (served at the site root)."
    nm = book / "node_modules"
    embed = nm / "@jupyter-widgets" / "html-manager" / "dist"
    mj = nm / "mathjax" / "es5"
    if not (embed / "embed.js").exists() or not (mj / "tex-mml-chtml.js").exists():
        sys.exit("book/node_modules is missing: run `npm ci --prefix book` first (make book does)")
    for f in embed.iterdir():
        if f.suffix in (".map", ".txt") or "amd" in f.name: continue
        shutil.copy2(f, static / f.name)
    shutil.copytree(mj, extra / "mathjax", dirs_exist_ok=True)

LOADS = re.compile(r"<(script|link|img|iframe|source|video|audio|embed|object|track)\b[^>]*?"
                   r"\b(src|href|data|srcset|poster)\s*=\s*[\"']\s*((?:https?:)?//[^\"']+)", re.I)

def check_offline(html_dir: Path):
    "Pages that load a resource (script, style, font, image, frame, media) from another site. Plain links (<a href>) are fine."
    bad = []
    for page in html_dir.rglob("*.html"):
        text = page.read_text(errors="ignore")
        for m in LOADS.finditer(text):
            tag = m.group(0)
            if m.group(1).lower() == "link" and not re.search(r"stylesheet|preload|prefetch|icon|font|modulepreload", tag, re.I): continue
            bad.append(f"{page.relative_to(html_dir)}: {tag[:160]}")
        for m in re.finditer(r"(@import\s+[\"']|url\(\s*[\"']?)(https?:)?//[^)\"']+", text):
            bad.append(f"{page.relative_to(html_dir)}: {m.group(0)[:160]}")
    for css in html_dir.rglob("*.css"):
        for m in re.finditer(r"(@import\s+[\"']|url\(\s*[\"']?)(https?:)?//[^)\"']+", css.read_text(errors="ignore")):
            bad.append(f"{css.relative_to(html_dir)}: {m.group(0)[:160]}")
    return bad

MATHJAX_SRC = re.compile(r"<script\b[^>]*\bsrc=\"([^\"]*mathjax[^\"]*)\"", re.I)

def check_pages(html_dir: Path):
    "Per-page problems: not exactly one MathJax script, a MathJax path under _static, `#|` directives or stderr in the text."
    bad = []
    for page in sorted(html_dir.glob("*.html")):
        if page.name in ("genindex.html", "search.html"): continue
        text = page.read_text(errors="ignore")
        if re.search(r'http-equiv="refresh"', text, re.I): continue   # a redirect page
        srcs = MATHJAX_SRC.findall(text)
        if len(srcs) != 1: bad.append(f"{page.name}: {len(srcs)} MathJax scripts (expected 1): {srcs[:3]}")
        elif "_static/mathjax" in srcs[0].replace("_static/../", ""): bad.append(f"{page.name}: MathJax loaded from _static: {srcs[0]}")
        body = re.sub(r"<(script|style)\b[\s\S]*?</\1>", "", text)
        if re.search(r"#\|\s*[\w-]+", body): bad.append(f"{page.name}: a `#|` directive is shown on the page")
        if "output stderr" in body: bad.append(f"{page.name}: a cell writes to stderr (warnings must be fixed, not shown)")
    return bad

def stage_book(stage: Path, nbs: Path, book: Path = BOOK, partial: bool = False, diagnose: bool = False):
    """Assemble the Jupyter Book source folder `stage` from `book` (config, toc, bib, _static) and `nbs` (pages).

    `diagnose`: a failing notebook does not stop the build (every notebook runs and every failure is
    listed); the build still fails at the end (-W)."""
    if stage.exists():
        for p in stage.iterdir():
            if p.name not in ("_build", "_extra"): (shutil.rmtree if p.is_dir() else Path.unlink)(p)
    stage.mkdir(exist_ok=True)
    for name in ("_config.yml", "_toc.yml", "references.bib"):
        if (book / name).exists(): shutil.copy2(book / name, stage / name)
    if diagnose:
        import yaml
        cfg = yaml.safe_load((stage / "_config.yml").read_text())
        cfg["sphinx"]["config"]["nb_execution_raise_on_error"] = False
        (stage / "_config.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    static, extra = stage / "_static", stage / "_extra"
    if (book / "_static").exists(): shutil.copytree(book / "_static", static, dirs_exist_ok=True)
    static.mkdir(exist_ok=True); extra.mkdir(exist_ok=True)
    for stale in ("mathjax",):   # older builds copied MathJax into book/_static: never ship it from there
        if (static / stale).exists(): shutil.rmtree(static / stale)
    copy_assets(static, extra, book)
    (stage / "_ext").mkdir(exist_ok=True)
    shutil.copy2(Path(__file__).with_name("book_ext.py"), stage / "_ext" / "attnstat_book.py")
    notebooks = sorted(p for p in nbs.glob("*.ipynb") if not p.name.startswith("_"))
    pages = sorted(p for p in nbs.glob("*.md") if not p.name.startswith("_"))
    listed = toc_files(stage / "_toc.yml")
    missing = [p.stem for p in notebooks + pages if p.stem not in listed]
    if missing and not partial:
        sys.exit(f"pages missing from book/_toc.yml: {missing} (--partial builds the listed ones only)")
    for p in notebooks:
        if p.stem in listed: convert(p, stage / p.name)
    for p in pages:
        if p.stem in listed: shutil.copy2(p, stage / p.name)
    return stage

def _execute_one(path: str):
    "Execute one staged notebook in its folder, as MyST-NB would; returns (executed notebook JSON, seconds, error)."
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution
    nb = nbformat.read(path, as_version=4)
    r = single_nb_execution(nb, cwd=str(Path(path).parent), allow_errors=False, timeout=900, meta_override=True)
    return nbformat.writes(nb), r.time, (None if r.err is None else f"{r.err.__class__.__name__}")

def pre_execute(stage: Path, out_parent: Path, jobs: int) -> None:
    """Execute the notebooks that are not in the jupyter-cache, `jobs` at a time, and store them there.

    MyST-NB then finds every notebook in the cache instead of executing them one after the other.
    A notebook that fails here is left out of the cache: the build runs it again and reports the error."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    cache = get_cache(str(out_parent / "_build" / ".jupyter_cache"))
    todo = []
    for p in sorted(stage.glob("*.ipynb"), key=lambda q: -q.stat().st_size):
        try: cache.match_cache_notebook(nbformat.read(p, as_version=4))
        except KeyError: todo.append(p)
    if not todo: return
    print(f"executing {len(todo)} notebook(s), {jobs} at a time: {', '.join(p.stem for p in todo)}", flush=True)
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        for p, (text, seconds, err) in zip(todo, ex.map(_execute_one, [str(p) for p in todo])):
            if err is None:
                cache.cache_notebook_bundle(CacheBundleIn(nbformat.reads(text, as_version=4), str(p), data={"execution_seconds": seconds}),
                                            check_validity=False, overwrite=True)
            print(f"  {p.stem}: {seconds:.0f} s" + (f" FAILED ({err}; the build reruns it and shows the error)" if err else ""), flush=True)
    print(f"notebooks executed in {time.time() - t0:.0f} s wall", flush=True)

def run_build(stage: Path, out_parent: Path, all_pages: bool = False, jobs: int = 1) -> Path:
    "Run jupyter-book with -W (after executing uncached notebooks `jobs` at a time); then the offline and per-page checks."
    if jobs > 1: pre_execute(stage, out_parent, jobs)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(stage), "--path-output", str(out_parent), "-W", "--keep-going"]
    if all_pages: cmd.insert(2, "--all")
    print("+", " ".join(cmd), flush=True)
    t0 = time.time()
    r = subprocess.run(cmd)
    print(f"jupyter-book build took {time.time() - t0:.0f} s", flush=True)
    if r.returncode: sys.exit(f"jupyter-book build failed (exit {r.returncode}); see the warnings and errors above")
    html = out_parent / "_build" / "html"
    bad = check_offline(html)
    if bad: sys.exit("off-site resources loaded by the built HTML:\n" + "\n".join(bad))
    bad = check_pages(html)
    if bad: sys.exit("problems in the built pages:\n" + "\n".join(bad))
    return html

def main():
    stage_book(STAGE, NBS, BOOK, partial="--partial" in sys.argv, diagnose="--diagnose" in sys.argv)
    jobs = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--jobs=")), min(2, os.cpu_count() or 1))
    html = run_build(STAGE, BOOK, all_pages="--all" in sys.argv, jobs=jobs)
    print(f"book written to {html.relative_to(ROOT)}/index.html (no off-site resources; one MathJax per page)")

if __name__ == "__main__":
    main()
