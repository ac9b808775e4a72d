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

Options: `--partial` builds only the notebooks listed in the toc; `--toc=FILE` builds a partial book from another
table of contents into book/_build/partial/_build/html (staged in _book_partial/; for development); `--all` rebuilds every page;
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
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":   # a YAML-quoted value
                value = value[1:-1].replace("\\" + value[0], value[0])
            meta.setdefault(group, {})[field] = value
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
    write_if_changed(dst, json.dumps(nb, indent=1))

def write_if_changed(dst: Path, data) -> bool:
    """Write `data` (str or bytes) to `dst` only when its content differs; returns whether it wrote.

    An unchanged staged file keeps its modification time, so Sphinx and the jupyter-cache see it as unchanged:
    an edit to one notebook re-reads that page (and re-writes the pages that link to it), not the whole book."""
    data = data.encode() if isinstance(data, str) else data
    if dst.exists() and dst.read_bytes() == data: return False
    tmp = dst.with_name(dst.name + ".tmp"); tmp.write_bytes(data); os.replace(tmp, dst)
    return True

def sync_file(src: Path, dst: Path) -> bool:
    "Copy `src` to `dst` when the content differs (`write_if_changed`); returns whether it wrote."
    return write_if_changed(dst, src.read_bytes())

def sync_tree(src: Path, dst: Path) -> None:
    "Mirror the files of folder `src` into `dst`, writing only those whose content differs."
    for f in src.rglob("*"):
        if f.is_file():
            (dst / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            sync_file(f, dst / f.relative_to(src))

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
        sync_file(f, static / f.name)
    sync_tree(mj, extra / "mathjax")

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

# ---- build-time math and page weight (issue 23): no page typesets in the browser ----------------------
MATH_EL = re.compile(r'<(span|div) class="math notranslate nohighlight"([^>]*)>([\s\S]*?)</\1>')
TEX_SEG = re.compile(r"\\\(([\s\S]*?)\\\)|\\\[([\s\S]*?)\\\]|(\\begin\{([a-zA-Z]+\*?)\}[\s\S]*?\\end\{\4\})")
WIDGET_STATE = re.compile(r'<script\b[^>]*type="application/vnd\.jupyter\.widget-(state|view)\+json"')
MATH_CSS, FONT_DIR = "attnstat-math.css", "mathjax-fonts"
MATH_ITEMS = "attnstat-math-tex.json"   # every formula rendered into this output (an incremental build keeps the CSS complete)

def has_widgets(text: str) -> bool:
    "A page with saved ipywidgets state (it needs the embedder)."
    return bool(WIDGET_STATE.search(text))

WIDGET_STATE_JSON = re.compile(r'<script\b[^>]*type="application/vnd\.jupyter\.widget-state\+json"[^>]*>([\s\S]*?)</script>')

def widgets_need_mathjax(text: str) -> bool:
    "Whether the saved widget state has TeX that the embedder typesets in the browser (labels with $...$ or \\(...\\), HTMLMath)."
    for state in WIDGET_STATE_JSON.findall(text):
        if "HTMLMathModel" in state or re.search(r'"(?:description|value|_options_labels)"\s*:\s*(?:\[[^\]]*)?"[^"]*(?:\$[^"$]+\$|\\\\\()', state):
            return True
    return False

def _math_segments(text: str):
    "Yield (page-level match, [(segment match, tex, display)]) for every math element of a page."
    import html as _html
    for m in MATH_EL.finditer(text):
        display = m.group(1) == "div"
        segs = [(s, _html.unescape(s.group(1) if s.group(1) is not None else s.group(2) if s.group(2) is not None else s.group(3)),
                 display or s.group(2) is not None or s.group(3) is not None) for s in TEX_SEG.finditer(m.group(3))]
        yield m, segs

LAZY_MIN_CHARS = 1500   # a closed fold smaller than this stays inline HTML
FOLD_OPEN = re.compile(r"<details\b([^>]*)>")

def _balanced_end(text: str, start: int, tag: str = "details") -> int:
    "Index just after the `</tag>` that closes the element opened at `start`."
    depth = 0
    for m in re.compile(rf"<(/?){tag}\b[^>]*>").finditer(text, start):
        depth += -1 if m.group(1) else 1
        if depth == 0: return m.end()
    raise ValueError(f"unbalanced <{tag}> at {start}")

def lazy_folds(text: str) -> tuple[str, int]:
    """Ship the body of each closed fold (a derivation dropdown or a collapsed code cell) as inert text, turned into
    HTML when it is opened (book/_static/attnstat-folds.js). Returns (page, number of folds made lazy)."""
    out, pos, n = [], 0, 0
    for m in FOLD_OPEN.finditer(text):
        if m.start() < pos: continue   # inside a fold already made lazy
        attrs = m.group(1)
        cls = (re.search(r'class="([^"]*)"', attrs) or [None, ""])[1]
        if ("sd-dropdown" not in cls and "above-input" not in cls) or re.search(r"\bopen\b", re.sub(r'"[^"]*"', "", attrs)): continue
        end = _balanced_end(text, m.start())
        inner = text[m.end():end - len("</details>")]
        sm = re.match(r"\s*<summary\b[\s\S]*?</summary>", inner)
        if not sm: continue
        body = inner[sm.end():]
        if len(body) < LAZY_MIN_CHARS or body.lstrip().startswith('<div class="attnstat-lazy">'): continue
        body = re.sub(r"</script", r"<\\/script", body, flags=re.I).replace("<!--", "<\\!--")
        out += [text[pos:m.end()], inner[:sm.end()],
                f'<div class="attnstat-lazy"><script type="text/x-attnstat-fold">{body}</script></div></details>']
        pos, n = end, n + 1
    out.append(text[pos:])
    return "".join(out), n

def prerender_math(html_dir: Path, book: Path = BOOK) -> dict:
    """Replace the TeX of every page by MathJax CHTML markup (tools/prerender_math.js, one node process for the whole
    book), write one stylesheet `_static/attnstat-math.css` and the woff fonts, and drop MathJax, its configuration
    from every page whose widgets (if any) have no TeX labels, and the widget embedder from the pages without widgets.
    Returns {page: (formulas, kept MathJax)}."""
    import html as _html
    pages = [p for p in sorted(html_dir.glob("*.html"))]
    texts = {p: p.read_text() for p in pages}
    items, where = [], {}
    for p, text in texts.items():
        for m, segs in _math_segments(text):
            for s, tex, display in segs:
                key = (tex, display)
                if key not in where: where[key] = len(items); items.append([tex, int(display)])
    static = html_dir / "_static"
    cache = static / MATH_ITEMS
    if cache.exists(): known = [tuple(x) for x in json.loads(cache.read_text())]
    else:   # pages pre-rendered before the list existed: their TeX is in the aria-label of each formula
        known = [(_html.unescape(m.group(1)), int(bool(m.group(2)))) for text in texts.values()
                 for m in re.finditer(r'<mjx-container class="MathJax" jax="CHTML" role="img" aria-label="([^"]*)"( display="true")?', text)]
    extra = [list(k) for k in dict.fromkeys(known) if (k[0], bool(k[1])) not in where]
    nm = book / "node_modules"
    if not (nm / "mathjax-full" / "js" / "mathjax.js").exists():
        sys.exit("book/node_modules/mathjax-full is missing: run `npm ci --prefix book` first (make book does)")
    # the formulas of pages rendered by an earlier run are rendered again (markup discarded) so that the adaptive
    # stylesheet covers their characters too
    r = subprocess.run(["node", str(ROOT / "tools" / "prerender_math.js"), str(nm)], input=json.dumps({"items": items + extra, "fontURL": FONT_DIR}),
                       capture_output=True, text=True)
    if r.returncode: sys.exit(f"math pre-rendering failed: {r.stderr[-2000:]}")
    out = json.loads(r.stdout)
    if out["errors"]:
        sys.exit("TeX errors (fix the formulas):\n" + "\n".join(f"  {items[i][0][:120]!r}: {msg}" for i, msg in out["errors"][:20]))
    (static / MATH_CSS).write_text(out["css"])
    cache.write_text(json.dumps([[t, int(d)] for t, d in items] + extra, ensure_ascii=False))
    fonts = static / FONT_DIR
    fonts.mkdir(exist_ok=True)
    for f in (nm / "mathjax-full" / "es5" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"): shutil.copy2(f, fonts / f.name)
    summary = {}
    for p, text in texts.items():
        n = 0
        def element(m):
            nonlocal n
            body = m.group(3)
            segs = list(TEX_SEG.finditer(body))
            if not segs: return m.group(0)
            parts, last = [], 0
            for s in segs:
                tex = _html.unescape(s.group(1) if s.group(1) is not None else s.group(2) if s.group(2) is not None else s.group(3))
                display = m.group(1) == "div" or s.group(2) is not None or s.group(3) is not None
                markup = out["html"][where[(tex, display)]]
                label = _html.escape(tex.strip(), quote=True)
                markup = markup.replace('<mjx-container class="MathJax" jax="CHTML"', f'<mjx-container class="MathJax" jax="CHTML" role="img" aria-label="{label}"', 1)
                parts += [body[last:s.start()], markup]; last = s.end(); n += 1
            parts.append(body[last:])
            return f'<{m.group(1)} class="math notranslate nohighlight attnstat-prerendered"{m.group(2)}>{"".join(parts)}</{m.group(1)}>'
        text = MATH_EL.sub(element, text)
        widgets = has_widgets(text)
        keep = widgets and widgets_need_mathjax(text)
        if not keep:   # no TeX left for the browser: no MathJax, no MathJax configuration, no widget-label shim
            text = re.sub(r'<script\b[^>]*\bsrc="[^"]*(?:mathjax[^"]*|attnstat-widget-labels\.js)[^"]*"[^>]*>\s*</script>\s*', "", text, flags=re.I)
            text = re.sub(r"<script>\s*window\.MathJax\s*=[\s\S]*?</script>\s*", "", text)
        if not widgets:   # and no widget embedder without widgets
            text = re.sub(r'<script\b[^>]*\bsrc="[^"]*embed\.js[^"]*"[^>]*>\s*</script>\s*', "", text, flags=re.I)
        text, _ = lazy_folds(text)
        if p.name != "search.html":   # the theme's inline search loads the whole index in <head>: let the page parse first
            text = re.sub(r'<script src="((?:_static/)?(?:searchtools|language_data)\.js|searchindex\.js)"></script>',
                          r'<script defer src="\1"></script>', text)
        if MATH_CSS not in text:
            text = text.replace("</head>", f'<link rel="stylesheet" type="text/css" href="_static/{MATH_CSS}" />\n</head>', 1)
        if text != texts[p]: p.write_text(text)   # a page Sphinx did not rewrite keeps its file (incremental rebuilds)
        summary[p.name] = (n, keep)
    return summary

def check_pages(html_dir: Path):
    """Per-page problems: math left to the browser (TeX not pre-rendered), MathJax or the widget embedder on a page
    without widgets (more than one MathJax on a page with widgets), a MathJax path under _static, `#|` directives
    or stderr in the text."""
    bad = []
    css_path = html_dir / "_static" / MATH_CSS
    css = css_path.read_text() if css_path.exists() else ""
    for page in sorted(html_dir.glob("*.html")):
        if page.name in ("genindex.html", "search.html"): continue
        text = page.read_text(errors="ignore")
        if re.search(r'http-equiv="refresh"', text, re.I): continue   # a redirect page
        glyphs = set(re.findall(r'<mjx-c class="(mjx-c[0-9A-F]+(?: TEX-[A-Z0-9]+)?)"', text))
        nocss = [g for g in glyphs if "." + g.replace(" ", ".") + "::before" not in css]
        if nocss: bad.append(f"{page.name}: {len(nocss)} character(s) of its formulas are not in {MATH_CSS}, e.g. {nocss[:3]}")
        srcs = MATHJAX_SRC.findall(text)
        widgets = has_widgets(text)
        if srcs and not (widgets and widgets_need_mathjax(text)):
            bad.append(f"{page.name}: MathJax loaded on a page whose math is all pre-rendered: {srcs[:3]}")
        if widgets and len(srcs) > 1: bad.append(f"{page.name}: {len(srcs)} MathJax scripts (expected at most 1): {srcs[:3]}")
        if srcs and "_static/mathjax" in srcs[0].replace("_static/../", ""): bad.append(f"{page.name}: MathJax loaded from _static: {srcs[0]}")
        if not widgets and re.search(r'<script\b[^>]*src="[^"]*embed\.js', text): bad.append(f"{page.name}: the widget embedder is loaded on a page without widgets")
        raw = [m.group(3)[:80] for m in MATH_EL.finditer(text) if TEX_SEG.search(m.group(3))]
        if raw: bad.append(f"{page.name}: {len(raw)} formula(s) not pre-rendered, e.g. {raw[0]!r}")
        body = re.sub(r"<(script|style)\b[\s\S]*?</\1>", "", text)
        if re.search(r"#\|\s*[\w-]+", body): bad.append(f"{page.name}: a `#|` directive is shown on the page")
        if "output stderr" in body: bad.append(f"{page.name}: a cell writes to stderr (warnings must be fixed, not shown)")
    return bad

def project_info(root: Path = ROOT) -> dict:
    "The version (attnstat/__init__.py), the repository URL (pyproject [project.urls], its one home) and the build date."
    text = (root / "pyproject.toml").read_text()
    try:
        import tomllib
        urls = tomllib.loads(text)["project"]["urls"]
    except ModuleNotFoundError:   # Python 3.10: the one line is enough
        urls = dict(re.findall(r'^(\w+)\s*=\s*"([^"]+)"', text.split("[project.urls]", 1)[1].split("\n[", 1)[0], re.M))
    version = re.search(r'^__version__\s*=\s*"([^"]+)"', (root / "attnstat" / "__init__.py").read_text(), re.M).group(1)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")   # reproducible builds fix the date
    date = time.strftime("%Y-%m-%d", time.gmtime(int(epoch)) if epoch else time.gmtime())
    return {"version": version, "repository": urls["Repository"], "documentation": urls.get("Documentation", ""), "date": date}

def write_project_config(cfg_path: Path, info: dict) -> dict:
    "Write the repository URL (launch buttons, repository link) and a version-and-date footer into a staged `_config.yml`."
    import yaml
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg.setdefault("repository", {})["url"] = info["repository"]
    cfg.setdefault("html", {})["extra_footer"] = (
        f'<p class="attnstat-build">attnstat {info["version"]}, built {info["date"]} from '
        f'<a href="{info["repository"]}">{info["repository"]}</a></p>')
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
    return cfg

def stage_book(stage: Path, nbs: Path, book: Path = BOOK, partial: bool = False, diagnose: bool = False, toc: Path = None):
    """Assemble the Jupyter Book source folder `stage` from `book` (config, toc, bib, _static) and `nbs` (pages).

    `diagnose`: a failing notebook does not stop the build (every notebook runs and every failure is
    listed); the build still fails at the end (-W)."""
    import tempfile
    stage.mkdir(exist_ok=True)
    staged = set()   # the top-level names this build stages; anything else left from an earlier build is removed
    def put(name, data):
        staged.add(name); write_if_changed(stage / name, data)
    for name in ("_toc.yml", "references.bib", "search_scorer.js"):
        if (book / name).exists(): put(name, (book / name).read_bytes())
    if toc is not None: put("_toc.yml", toc.read_bytes())   # a partial book (--toc=FILE)
    put("_config.yml", config_text(book / "_config.yml", stage, "search_scorer.js" in staged, diagnose))
    static, extra = stage / "_static", stage / "_extra"
    staged |= {"_static", "_extra", "_ext", "_build"}
    if (book / "_static").exists(): sync_tree(book / "_static", static)
    static.mkdir(exist_ok=True); extra.mkdir(exist_ok=True)
    for stale in ("mathjax",):   # older builds copied MathJax into book/_static: never ship it from there
        if (static / stale).exists(): shutil.rmtree(static / stale)
    copy_assets(static, extra, book)
    (stage / "_ext").mkdir(exist_ok=True)
    sync_file(Path(__file__).with_name("book_ext.py"), stage / "_ext" / "attnstat_book.py")
    notebooks = sorted(p for p in nbs.glob("*.ipynb") if not p.name.startswith("_"))
    pages = sorted(p for p in nbs.glob("*.md") if not p.name.startswith("_"))
    listed = toc_files(stage / "_toc.yml")
    missing = [p.stem for p in notebooks + pages if p.stem not in listed]
    if missing and not partial:
        sys.exit(f"pages missing from book/_toc.yml: {missing} (--partial builds the listed ones only)")
    for p in notebooks:
        if p.stem in listed: convert(p, stage / p.name); staged.add(p.name)
    for p in pages:
        if p.stem in listed: put(p.name, p.read_bytes())
    import api_reference   # tools/api_reference.py: the API reference pages (api_*.md), generated from the code
    with tempfile.TemporaryDirectory() as tmp:
        for p in api_reference.write_pages(Path(tmp)):
            if p.stem not in listed and not partial: sys.exit(f"API reference page {p.stem} missing from book/_toc.yml")
            put(p.name, p.read_bytes())
    for p in stage.iterdir():   # pages and files of an earlier build that this one does not stage
        if p.name not in staged: (shutil.rmtree if p.is_dir() else Path.unlink)(p)
    return stage

def config_text(src: Path, stage: Path, scorer: bool, diagnose: bool) -> str:
    "The staged `_config.yml`: the project's URLs and footer, the search scorer's absolute path, `diagnose` settings."
    import yaml
    with tempfile_path(src) as tmp:
        cfg = write_project_config(tmp, project_info())
    if scorer:   # Sphinx opens html_search_scorer relative to the working directory
        cfg["sphinx"]["config"]["html_search_scorer"] = str((stage / "search_scorer.js").resolve())
    if diagnose: cfg["sphinx"]["config"]["nb_execution_raise_on_error"] = False
    return yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True)

def tempfile_path(src: Path):
    "A context manager: a temporary copy of `src` (deleted afterwards)."
    import contextlib, tempfile
    @contextlib.contextmanager
    def cm():
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d) / src.name; shutil.copy2(src, tmp); yield tmp
    return cm()

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

def run_build(stage: Path, out_parent: Path, all_pages: bool = False, jobs: int = 1, strict: bool = True) -> Path:
    """Run jupyter-book with -W (after executing uncached notebooks `jobs` at a time); then the offline and per-page checks.

    `strict=False` (partial books of `--toc=FILE` only, whose references to unlisted pages cannot resolve) drops -W."""
    if jobs > 1: pre_execute(stage, out_parent, jobs)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(stage), "--path-output", str(out_parent), "-W", "--keep-going"]
    if not strict: cmd.remove("-W")
    if all_pages: cmd.insert(2, "--all")
    print("+", " ".join(cmd), flush=True)
    t0 = time.time()
    r = subprocess.run(cmd)
    print(f"jupyter-book build took {time.time() - t0:.0f} s", flush=True)
    if r.returncode: sys.exit(f"jupyter-book build failed (exit {r.returncode}); see the warnings and errors above")
    html = out_parent / "_build" / "html"
    postprocess(html)
    return html

def postprocess(html: Path) -> None:
    "Steps 4-5 on an already built book (`--postprocess=DIR`): pre-render the math, then the offline and per-page checks."
    t0 = time.time()
    summary = prerender_math(html)
    print(f"math pre-rendered: {sum(n for n, _ in summary.values())} formulas on {len(summary)} pages in {time.time() - t0:.0f} s; "
          f"MathJax kept on {sum(k for _, k in summary.values())} page(s) (widgets with TeX labels)", flush=True)
    bad = check_offline(html)
    if bad: sys.exit("off-site resources loaded by the built HTML:\n" + "\n".join(bad))
    bad = check_pages(html)
    if bad: sys.exit("problems in the built pages:\n" + "\n".join(bad))

def main():
    os.environ.setdefault("ATTNSTAT_NO_INSTALL", "1")   # the notebooks' install cell (tools/install_cell.py) never runs here
    os.environ.setdefault("ATTNSTAT_DATA", str(ROOT / "data"))   # pages show the committed data, never a ~/.cache copy
    os.environ.setdefault("ATTNSTAT_NOTEBOOKS", str(NBS))   # figure listings read the source notebooks, not the staged copies (labels stripped)
    pp = next((Path(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--postprocess=")), None)
    if pp is not None: return postprocess(pp)
    toc = next((Path(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--toc=")), None)
    stage, out_parent = (STAGE, BOOK) if toc is None else (ROOT / "_book_partial", BOOK / "_build" / "partial")
    stage_book(stage, NBS, BOOK, partial="--partial" in sys.argv or toc is not None, diagnose="--diagnose" in sys.argv, toc=toc)
    jobs = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--jobs=")), min(2, os.cpu_count() or 1))
    html = run_build(stage, out_parent, all_pages="--all" in sys.argv, jobs=jobs, strict=toc is None)
    print(f"book written to {html.relative_to(ROOT)}/index.html (no off-site resources; one MathJax per page)")

if __name__ == "__main__":
    main()
