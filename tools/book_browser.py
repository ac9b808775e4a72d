"""Open every page of the built book in headless Chromium and list what a reader would trip over.

Used by tests/test_book.py (one assertion listing every offending page) and on the command line:

    .venv/bin/python tools/book_browser.py [--html book/_build/html] [--report FILE.md] [PAGE ...]

For each page (served over http://127.0.0.1 by a local server, every off-site request blocked and recorded) it checks:
- no console error, no uncaught exception, no failed request (HTTP status >= 400 included) or off-site request;
- a favicon declared by the page that loads (no favicon.ico 404);
- math pre-rendered at build time: no MathJax on a page without widgets (at most one on a page with widgets),
  no MathJax error and no raw TeX (`$$`, a TeX delimiter) left in the text;
- every image in the article is in a <figure> with a numbered caption, with alt text that describes
  it (not empty, not a file name); widget frames need the numbered caption;
- visible code (code cells not collapsed) as a share of all visible characters; at most 40% on the
  theory chapters;
- no `#|` directive and no word "spec"/"specification" in the text, no unresolved cross-reference,
  no raw object repr (`Name(field=...)`, `<matplotlib...>`) in an output, no image shown twice;
- every precomputed widget changes its image when its first control moves; no kernel-only widget.
Page-load time (navigation to the load event, the math fonts loaded, MathJax typeset where it still runs, and
widgets rendered) is measured per page, with the machine load; `--search` also checks that the chapter that proves
an identity is the first search result for its name (SEARCH_EXPECT).
"""
from __future__ import annotations
import argparse, functools, http.server, os, re, shutil, sys, threading, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "book" / "_build" / "html"
CHROMIUM = (os.environ.get("ATTNSTAT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
            or shutil.which("google-chrome"))
LOCAL = ("file:", "data:", "blob:", "about:", "http://127.0.0.1:")
# Page-load targets on an idle machine (issue 23): median and maximum over the pages, in seconds.
LOAD_MEDIAN_S, LOAD_MAX_S = 1.0, 1.5
# The first search result for a query must be this page (the chapter that proves the identity, not one that mentions it).
SEARCH_EXPECT = {"Nishimori": "01c_slr_population"}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync", "--disable-default-apps", "--hide-scrollbars"]
# Chapters whose visible code must be at most MAX_CODE_SHARE of the visible characters.
THEORY = ["01_slr", "01a_slr_models", "01b_slr_activations", "01c_slr_population", "01d_slr_comparison", "01e_slr_dynamics",
          "01f_slr_positional", "01g_slr_multihead", "02_slr_replica_theory", "02a_slr_replica", "02b_slr_finite_samples",
          "02c_slr_bayes_optimal", "02d_slr_amp", "02e_slr_algorithms", "02f_slr_tuned_ridge", "03_rmt", "03a_rmt_hermite", "03b_rmt_kernel",
          "03c_rmt_theory", "03d_rmt_vs_ridge", "03e_rmt_generalisation", "03f_rmt_multihead", "03g_rmt_strong_signal",
          "04_pretrained_weights"]
MAX_CODE_SHARE = 0.40
SKIP = {"genindex.html", "search.html"}

def book_pages(html: Path = HTML) -> list[Path]:
    "The content pages of a built book (not the index/search pages, not redirects)."
    out = []
    for p in sorted(html.glob("*.html")):
        if p.name in SKIP: continue
        if re.search(r'http-equiv="refresh"', p.read_text(errors="ignore")[:4000], re.I): continue
        out.append(p)
    return out

PAGE_JS = r"""async () => {
  const art = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const vis = el => el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null;
  const nonws = s => (s || '').replace(/\s+/g, '').length;
  const out = {};
  // MathJax entry bundles (its own on-demand extension files, e.g. input/tex/extensions/boldsymbol.js, are not a second MathJax)
  out.mathjax = Array.from(document.querySelectorAll('script[src]')).map(s => s.getAttribute('src'))
    .filter(src => /mathjax/i.test(src) && !/\/(input|output|a11y|ui|adaptors|sre)\//.test(src.replace(/^.*mathjax/i, '')));
  out.widgets = !!document.querySelector("script[type='application/vnd.jupyter.widget-state+json'], script[type='application/vnd.jupyter.widget-view+json']");
  out.prerendered = document.querySelectorAll('.attnstat-prerendered mjx-container').length;
  const icon = document.querySelector("link[rel~='icon']");
  out.favicon = icon ? icon.href : null;
  out.faviconOk = false;
  if (icon) { try { const r = await fetch(icon.href); out.faviconOk = r.ok; } catch (e) { out.faviconOk = false; } }
  out.merror = Array.from(document.querySelectorAll('mjx-merror')).map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 80));
  const text = art.innerText;
  out.total = nonws(text);
  let code = 0;
  art.querySelectorAll('.cell_input').forEach(c => { if (vis(c)) code += nonws(c.innerText); });
  out.code = code;
  const all = art.textContent;
  out.directive = Array.from(new Set((all.match(/.{0,40}#\|\s*[\w-]+.{0,20}/g) || []).map(s => s.trim()))).slice(0, 3);
  // prose (and outputs): no "spec" at all; code: no reference to the spec in comments or strings
  const clone = art.cloneNode(true);
  clone.querySelectorAll('.cell_input, script, style').forEach(e => e.remove());
  const prose = clone.textContent;
  const codeText = Array.from(art.querySelectorAll('.cell_input')).map(c => c.textContent).join('\n');
  const ctx = (text, re) => Array.from(new Set((text.match(re) || []).map(s => s.trim())));
  out.spec = ctx(prose, /[^.\n]{0,40}\b(spec|specs|specification)\b[^.\n]{0,40}/gi)
    .concat(ctx(codeText, /[^\n]{0,30}(\bthe spec\b|\bspec\s*(§|section|table|\d)|\bspecification\b|\bpitfall\s*\d)[^\n]{0,30}/gi)).slice(0, 5);
  out.rawtex = [];
  art.querySelectorAll('p, li, td, figcaption, h1, h2, h3').forEach(e => {
    if (e.closest('pre, code, .cell_input, mjx-container, script')) return;
    // text nodes only (math is an element); a pre-rendered formula leaves no TeX behind
    const t = Array.from(e.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join('');
    if (/\$\$|\\\(|\\\[|\$[^$\s][^$]*\\[a-zA-Z]+[^$]*\$/.test(t)) out.rawtex.push(t.trim().slice(0, 80));
  });
  art.querySelectorAll('.widget-label, .widget-readout, .widget-inline-hbox label').forEach(e => {
    if (e.querySelector('mjx-container')) return;
    const t = e.textContent;
    if (/\$[^$]+\$/.test(t)) out.rawtex.push('widget label ' + t.trim().slice(0, 60) + ' (write \\(...\\) instead of $...$ in widget labels)');
  });
  out.unresolved = Array.from(art.querySelectorAll('span.xref, span.std-ref, span.std-numref, span.std-doc')).filter(s => !s.closest('a')).map(s => s.textContent.slice(0, 60));
  out.cellerrors = Array.from(art.querySelectorAll('.output.traceback, .output.error')).map(e => e.innerText.trim().split('\n').filter(l => /Error|Exception/.test(l)).slice(-1)[0] || e.innerText.slice(0, 80));
  out.reprs = [];
  art.querySelectorAll('.cell_output pre, .cell_output .output.text_plain').forEach(p => {
    const t = p.innerText;
    const m = t.match(/^\s*[A-Z]\w*\(\w+=|<matplotlib\.[^>]*>|<Figure size|^\s*(Text|Line2D)\(|array\(\[/m);
    if (m) out.reprs.push(t.trim().slice(0, 80));
  });
  out.images = Array.from(art.querySelectorAll('img')).filter(i => !i.closest('.bd-header-article, .header-article-items, nav')).map(i => {
    const fig = i.closest('figure');
    const num = fig ? fig.querySelector('figcaption .caption-number') : null;
    return {src: (i.getAttribute('src') || '').slice(0, 200), alt: i.getAttribute('alt'),
            widget: !!i.closest('.jupyter-widgets, .widget-image, .attnstat-precomputed') || i.classList.contains('attnstat-frame'),
            figure: !!fig, number: num ? num.textContent.trim() : null};
  });
  out.deadwidgets = Array.from(art.querySelectorAll('.widget-slider, .widget-dropdown, .widget-toggle-buttons, .widget-checkbox, .widget-button')).filter(w => !w.closest('.attnstat-precomputed')).length;
  out.precomputed = art.querySelectorAll('.attnstat-precomputed').length;
  // every code block has a copy button, the ones in folds opened after load included (sphinx-copybutton adds its
  // buttons once ClipboardJS has loaded; attnstat-folds.js adds them to code that arrives later)
  for (let i = 0; i < 60 && window.ClipboardJS === undefined; i++) await new Promise(r => setTimeout(r, 50));
  await new Promise(r => setTimeout(r, 300));
  out.nocopy = Array.from(art.querySelectorAll('div.highlight pre')).filter(p => !(p.nextElementSibling && p.nextElementSibling.classList.contains('copybtn'))).length;
  return out;
}"""

SHOWN_JS = """async (fig) => {
  const imgs = Array.from(fig.querySelectorAll('img.attnstat-frame')).filter(i => i.offsetParent !== null);
  if (imgs.length !== 1) return {n: imgs.length};
  const buf = await (await fetch(imgs[0].src)).arrayBuffer();
  return {n: 1, cls: imgs[0].className, bytes: Array.from(new Uint8Array(buf))};
}"""

def _shown(fig):
    out = fig.evaluate(SHOWN_JS)
    if out["n"] != 1: return None
    idx = tuple(int(j) for _, j in sorted((int(l), j) for l, j in re.findall(r"attnstat-p(\d+)-(\d+)", out["cls"])))
    return idx, bytes(out["bytes"])

def _wait(cond, timeout=5.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = cond()
        if v: return v
        time.sleep(0.05)
    return cond()

def check_widgets(page, name) -> list[str]:
    "Move every control (slider, dropdown) of every precomputed figure in turn; the shown image must change each time."
    bad = []
    figs = page.query_selector_all(".attnstat-precomputed")
    for k, el in enumerate(figs):
        el.scroll_into_view_if_needed()
        if _shown(el) is None: bad.append(f"widget {k + 1}: not exactly one visible frame"); continue
        controls = el.query_selector_all(".noUi-handle, select")
        if not controls: bad.append(f"widget {k + 1}: no slider or dropdown"); continue
        for j, c in enumerate(controls):
            before = _shown(el)
            if before is None: bad.append(f"widget {k + 1}: lost its visible frame"); break
            idx, png = before
            if j >= len(idx): break
            readouts = lambda: [r.inner_text() for r in el.query_selector_all(".widget-readout")]
            before_readout = readouts()
            is_slider = bool(c.get_attribute("class") and "noUi-handle" in c.get_attribute("class"))
            if is_slider:
                c.focus(); page.keyboard.press("ArrowRight" if idx[j] == 0 else "ArrowLeft")
            else:
                c.select_option(index=1 if idx[j] == 0 else 0)
            new = _wait(lambda: (s := _shown(el)) is not None and s[0] != idx and s)
            if not new: bad.append(f"widget {k + 1}: moving control {j + 1} did not change the frame {idx}")
            elif new[0][j] == idx[j]: bad.append(f"widget {k + 1}: control {j + 1} changed another parameter ({idx} -> {new[0]})")
            elif new[1] == png: bad.append(f"widget {k + 1}: control {j + 1} changed the frame but not the image")
            elif is_slider and before_readout and readouts() == before_readout:
                bad.append(f"widget {k + 1}: slider {j + 1} moved the image but its readout still shows {before_readout}")
    return bad

def is_path(alt: str | None, src: str) -> bool:
    a = (alt or "").strip()
    return (not a or a == src or Path(src).name in a or bool(re.fullmatch(r"[\w./\\-]+\.(png|jpe?g|svg|gif|webp)", a, re.I))
            or bool(re.fullmatch(r"[0-9a-f]{16,}", a)))

class _Quiet(http.server.SimpleHTTPRequestHandler):
    "Serves the book like a static host: assets (not pages) cacheable for ten minutes, so a reader's second page reuses them."
    def log_message(self, *a): pass
    def end_headers(self):
        if not self.path.split("?")[0].endswith((".html", "/")): self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

def serve(html: Path):
    "A local HTTP server for the built book on a free port (a thread); returns (server, base URL)."
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/"

def check_page(browser, path: Path, theory=THEORY, max_share=MAX_CODE_SHARE, base: str | None = None) -> dict:
    "All checks on one page: {'page', 'failures': [...], 'load_s', 'code_share'}. `base`: the URL of the served book."
    page = browser.new_page(viewport={"width": 1280, "height": 1600}) if hasattr(browser, "contexts") else browser.new_page()
    remote, failed, errors = [], [], []
    def route(r):
        if r.request.url.startswith(LOCAL): r.continue_()
        else: remote.append(r.request.url); r.abort()
    page.route("**/*", route)
    page.on("requestfailed", lambda r: failed.append(r.url) if r.url.startswith(LOCAL) else None)
    page.on("response", lambda r: failed.append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {str(e)[:200]}"))
    page.on("console", lambda m: errors.append(m.text[:200]) if m.type == "error" else None)
    fails = []
    t0 = time.time()
    try:
        page.goto(base + path.name if base else path.resolve().as_uri(), wait_until="load", timeout=60000)
        # math ready: the fonts of the pre-rendered formulas loaded (and MathJax typeset, on the pages that still load it)
        page.evaluate("async () => { await document.fonts.ready; if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise; }")
        if page.query_selector(".attnstat-precomputed, script[type='application/vnd.jupyter.widget-view+json']"):
            try: page.wait_for_selector(".jupyter-widgets img, .widget-image, .attnstat-precomputed img", timeout=20000)
            except Exception: fails.append("widgets did not render within 20 s")
        load_s = time.time() - t0
        # folds shipped as inert text (attnstat-folds.js): opening the first must fill it; then fill all for the checks
        lazy_fail = page.evaluate("""async () => {
          const s = document.querySelector('script[type="text/x-attnstat-fold"]');
          if (!s) return null;
          const box = s.parentElement, d = box.closest('details');
          if (!d) return 'a lazy fold outside a <details>';
          d.open = true; await new Promise(r => setTimeout(r, 50));
          const ok = !box.querySelector(':scope > script[type="text/x-attnstat-fold"]') && box.children.length > 0;
          d.open = false;
          if (window.attnstatExpandFolds) window.attnstatExpandFolds();
          return ok ? null : 'opening a folded block did not show its content';
        }""")
        if lazy_fail: fails.append(lazy_fail)
        info = page.evaluate(PAGE_JS)
        widget_fails = check_widgets(page, path.name) if info["precomputed"] else []
        fails += check_anchors(page, (base + path.name) if base else path.resolve().as_uri())
    except Exception as e:
        page.close()
        return {"page": path.name, "failures": [f"could not be checked: {str(e)[:300]}"], "load_s": time.time() - t0, "code_share": None}
    page.close()
    name = path.stem
    if errors: fails += [f"console error: {e}" for e in dict.fromkeys(errors)]
    if failed: fails += [f"failed request: {u[-120:]}" for u in dict.fromkeys(failed)]
    if remote: fails += [f"off-site request: {u[:120]}" for u in dict.fromkeys(remote)]
    if not info["widgets"] and info["mathjax"]:
        fails.append(f"MathJax is loaded on a page without widgets (math is pre-rendered at build time): {info['mathjax'][:3]}")
    if len(info["mathjax"]) > 1: fails.append(f"{len(info['mathjax'])} MathJax scripts (expected at most 1): {info['mathjax'][:3]}")
    if not info["favicon"]: fails.append("no favicon declared (the browser then requests favicon.ico: a 404)")
    elif not info["faviconOk"]: fails.append(f"the favicon does not load: {info['favicon']}")
    fails += [f"MathJax error: {m}" for m in info["merror"]]
    fails += [(f"raw TeX not typeset in a {t}" if t.startswith("widget label") else
               f"raw TeX not typeset (a Markdown table printed as text? leave md_table(...) as the cell's last expression): {t!r}")
              for t in info["rawtex"][:5]]
    share = info["code"] / max(info["total"], 1)
    if name in theory and share > max_share:
        fails.append(f"visible code is {share:.0%} of the visible text (at most {max_share:.0%}): collapse exported code (#| export), hide tests (#| hide)")
    fails += [f"a `#|` directive appears in the text: ...{d}..." for d in info["directive"]]
    fails += [f"mentions the spec: ...{s}..." for s in info["spec"]]
    fails += [f"unresolved cross-reference: {u!r}" for u in info["unresolved"]]
    fails += [f"a cell error is shown on the page: {e[:160]!r}" for e in info["cellerrors"][:3]]
    fails += [f"raw repr in an output (show a table or a sentence): {r!r}" for r in info["reprs"][:5]]
    if info["nocopy"]: fails.append(f"{info['nocopy']} code block(s) without a copy button (folds: attnstat-folds.js addCopyButtons)")
    if info["deadwidgets"]: fails.append(f"{info['deadwidgets']} widget control(s) outside a precomputed figure (they do nothing in the static book)")
    seen = {}
    for im in info["images"]:
        if not im["figure"] or not im["number"]:
            what = "interactive figure (widget)" if im["widget"] else f"image {im['src'][-60:]}"
            fails.append(f"{what} without a numbered caption: give its cell `#| label: fig-...` and `#| fig-cap: ...`")
        if not im["widget"] and is_path(im["alt"], im["src"]):
            fails.append(f"image without descriptive alt text (`#| fig-alt: ...`): alt={im['alt']!r}")
        if not im["src"].startswith("data:") and not im["widget"]:
            seen[im["src"]] = seen.get(im["src"], 0) + 1
    fails += [f"the same image appears {n} times: {s[-60:]}" for s, n in seen.items() if n > 1]
    fails += widget_fails
    return {"page": path.name, "failures": fails, "load_s": load_s, "code_share": share, "formulas": info["prerendered"],
            "mathjax": bool(info["mathjax"]), "bytes": path.stat().st_size}

ANCHOR_TOP_PX = 150   # a followed anchor must put its heading within this many pixels of the top (the header's height)
SECTIONS_JS = """() => Array.from(document.querySelectorAll('.bd-article section[id]')).map(s => s.id)"""
TOP_JS = """async (id) => {
  await new Promise(r => setTimeout(r, 400));
  const el = document.getElementById(id), d = document.scrollingElement;
  if (!el) return null;
  // a heading near the end of the page cannot reach the top: the page is then scrolled to its end
  return {top: el.getBoundingClientRect().top, end: d.scrollTop + window.innerHeight >= d.scrollHeight - 2};
}"""

def check_anchors(page, url: str, top_px: float = ANCHOR_TOP_PX) -> list[str]:
    """Follow the middle section anchor of the page in place (a hash change) and open the page afresh at its last
    section anchor: each heading must land within `top_px` of the top of the window."""
    ids = page.evaluate(SECTIONS_JS)
    if len(ids) < 2: return []
    fails = []
    mid, last = ids[len(ids) // 2], ids[-1]
    page.evaluate("(id) => { location.hash = id; }", mid)
    r = page.evaluate(TOP_JS, mid)
    if r is None or not (-2 <= r["top"] <= top_px or (r["top"] > 0 and r["end"])):
        fails.append(f"the link to #{mid} lands {r and round(r['top'])} px from the top")
    page.goto(url.split("#")[0] + "#" + last, wait_until="load", timeout=60000)
    page.evaluate("document.fonts.ready.then(() => 1)")
    r = page.evaluate(TOP_JS, last)
    if r is None or not (-2 <= r["top"] <= top_px or (r["top"] > 0 and r["end"])):
        fails.append(f"opening the page at #{last} lands {r and round(r['top'])} px from the top")
    return fails

def check_every_anchor(page, url: str, top_px: float = ANCHOR_TOP_PX, fresh: bool = True) -> tuple[int, list[str]]:
    """Every section anchor of the page: followed in place (a hash change) and, with `fresh`, opened afresh; each
    heading must land within `top_px` of the top. Returns (anchors checked, failures)."""
    ids = page.evaluate(SECTIONS_JS)
    fails, base = [], url.split("#")[0]
    for sid in ids:
        page.evaluate("(id) => { location.hash = id; }", sid)
        r = page.evaluate(TOP_JS, sid)
        if r is None or not (-2 <= r["top"] <= top_px or (r["top"] > 0 and r["end"])):
            fails.append(f"the link to #{sid} lands {r and round(r['top'])} px from the top")
    if fresh:
        for sid in ids:
            page.goto(base + "#" + sid, wait_until="load", timeout=60000)
            page.evaluate("document.fonts.ready.then(() => 1)")
            r = page.evaluate(TOP_JS, sid)
            if r is None or not (-2 <= r["top"] <= top_px or (r["top"] > 0 and r["end"])):
                fails.append(f"opening the page at #{sid} lands {r and round(r['top'])} px from the top")
    return len(ids), fails

def check_all_anchors(html: Path = HTML, pages=None, fresh: bool = True, progress=False) -> dict:
    "check_every_anchor on every page (or the named ones): {page: (anchors, failures)}."
    from playwright.sync_api import sync_playwright
    paths = book_pages(html) if not pages else [html / (p if p.endswith(".html") else p + ".html") for p in pages]
    out, (srv, base) = {}, serve(html)
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = b.new_context(viewport={"width": 1280, "height": 1600}).new_page()
                for path in paths:
                    page.goto(base + path.name, wait_until="load", timeout=60000)
                    page.evaluate("document.fonts.ready.then(() => 1)")
                    out[path.name] = check_every_anchor(page, base + path.name, fresh=fresh)
                    if progress: print(f"{path.name}: {out[path.name][0]} anchors, {len(out[path.name][1])} off", flush=True)
            finally:
                b.close()
    finally:
        srv.shutdown()
    return out

SEARCH_JS = """async () => {
  for (let i = 0; i < 200; i++) {
    const items = document.querySelectorAll('#search-results ul.search li a, ul.search li a');
    const done = document.querySelector('#search-results p.search-summary, .search-summary');
    if (items.length && done && done.textContent.trim()) return Array.from(items).slice(0, 5).map(a => a.getAttribute('href'));
    await new Promise(r => setTimeout(r, 50));
  }
  return Array.from(document.querySelectorAll('ul.search li a')).slice(0, 5).map(a => a.getAttribute('href'));
}"""

def check_search(browser, base: str, html: Path, expect=SEARCH_EXPECT) -> list[str]:
    "The first search result for each query of `expect` is the expected page (skipped when that page is not built)."
    bad = []
    for q, want in expect.items():
        if not (html / f"{want}.html").exists(): continue
        page = browser.new_page()
        page.goto(f"{base}search.html?q={q}", wait_until="load", timeout=60000)
        hrefs = page.evaluate(SEARCH_JS)
        page.close()
        first = (hrefs[0] if hrefs else "").split("#")[0].split("?")[0]
        if not first.startswith(want): bad.append(f"search {q!r}: first result {first or 'none'} (expected {want}; top 5: {hrefs})")
    return bad

def check_book(html: Path = HTML, pages=None, progress=False, search: bool = False) -> list[dict]:
    """Run check_page on every page (or the named ones) with one headless Chromium, the book served on localhost.

    Each page is opened once to warm the browser's cache of the shared assets (as a reader's browser has them after
    the first page), then measured. `search`: add a result {'page': 'search.html', ...} with the search checks."""
    from playwright.sync_api import sync_playwright
    paths = book_pages(html) if not pages else [html / (p if p.endswith(".html") else p + ".html") for p in pages]
    results = []
    srv, base = serve(html)
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                ctx = b.new_context(viewport={"width": 1280, "height": 1600})
                if paths:   # warm-up: the shared CSS, fonts and scripts in the HTTP cache
                    w = ctx.new_page(); w.goto(base + paths[0].name, wait_until="load"); w.evaluate("document.fonts.ready.then(() => 1)"); w.close()
                for path in paths:
                    r = check_page(ctx, path, base=base)
                    if progress: print(f"{r['page']}: {len(r['failures'])} failure(s), {r['load_s']:.2f} s", flush=True)
                    results.append(r)
                if search:
                    fails = check_search(ctx, base, html)
                    results.append({"page": "search.html", "failures": fails, "load_s": None, "code_share": None})
            finally:
                b.close()
    finally:
        srv.shutdown()
    return results

def machine_load() -> str:
    "The 1-minute load average and the number of cores, for the report."
    try: l1, l5, _ = os.getloadavg()
    except OSError: return "unknown"
    return f"load average {l1:.2f} (1 min), {l5:.2f} (5 min) on {os.cpu_count()} cores"

def load_stats(results) -> tuple[float, float]:
    "Median and maximum page load over the measured pages."
    loads = sorted(r["load_s"] for r in results if r.get("load_s") is not None)
    if not loads: return float("nan"), float("nan")
    n = len(loads)
    med = loads[n // 2] if n % 2 else 0.5 * (loads[n // 2 - 1] + loads[n // 2])
    return med, loads[-1]

def report(results, html: Path = HTML) -> str:
    "Markdown: a summary table and the failures of each page."
    lines = [f"# Book browser check ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"Built book: `{html}`. Checked by `tools/book_browser.py` (the test `tests/test_book.py::test_every_page_in_the_browser`).", "",
             f"Machine: {machine_load()}.", "",
             "| page | failures | load + math ready (s) | size (kB) | formulas pre-rendered | MathJax at view time | visible code share |",
             "|---|---:|---:|---:|---:|---|---:|"]
    for r in results:
        if r.get("load_s") is None: continue
        share = "" if r["code_share"] is None else f"{r['code_share']:.0%}" + (" (theory)" if r["page"][:-5] in THEORY else "")
        lines.append(f"| {r['page']} | {len(r['failures'])} | {r['load_s']:.2f} | {r.get('bytes', 0) / 1024:.0f} | "
                     f"{r.get('formulas', '')} | {'yes (widgets)' if r.get('mathjax') else 'no'} | {share} |")
    med, mx = load_stats(results)
    if med == med:
        lines += ["", f"Page load (navigation to the load event, math fonts ready, widgets rendered; served on localhost): "
                      f"median {med:.2f} s, max {mx:.2f} s (targets: median <= {LOAD_MEDIAN_S} s, max <= {LOAD_MAX_S} s)."]
    for r in results:
        if r["failures"]:
            lines += ["", f"## {r['page']}", ""] + [f"- {f}" for f in r["failures"]]
    return "\n".join(lines) + "\n"

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", help="page names (default: every page)")
    ap.add_argument("--html", type=Path, default=HTML)
    ap.add_argument("--report", type=Path, help="write the Markdown report here")
    ap.add_argument("--search", action="store_true", help="also check the first search results (SEARCH_EXPECT)")
    ap.add_argument("--all-anchors", action="store_true",
                    help="check only the anchors: every section anchor of every page, followed in place and opened afresh")
    a = ap.parse_args(argv)
    if CHROMIUM is None: sys.exit("chromium is not installed (make chromium)")
    if a.all_anchors:
        res = check_all_anchors(a.html, a.pages, progress=True)
        n, bad = sum(v[0] for v in res.values()), [f"{k}: {f}" for k, v in res.items() for f in v[1]]
        text = (f"# Every section anchor ({machine_load()})\n\n{n} anchors on {len(res)} pages, each followed in place "
                f"and opened afresh: {len(bad)} land more than {ANCHOR_TOP_PX} px from the top.\n\n"
                + "".join(f"- {b}\n" for b in bad))
        if a.report: a.report.write_text(text)
        print(text)
        return 1 if bad else 0
    results = check_book(a.html, a.pages, progress=True, search=a.search)
    text = report(results, a.html)
    if a.report: a.report.write_text(text)
    print(text)
    return 1 if any(r["failures"] for r in results) else 0

if __name__ == "__main__":
    sys.exit(main())
