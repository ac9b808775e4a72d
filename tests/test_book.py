"""The built book: offline, math pre-rendered at build time, every reference resolved, and every page clean in a browser.

`make test` builds the book before running pytest; these tests read book/_build/html (set
ATTNSTAT_BOOK_HTML to check another build). The browser test opens every page in headless
Chromium (tools/book_browser.py) and fails with the list of ALL offending pages and what is wrong
on each, so chapter authors can fix them in one go; `python tools/book_browser.py` prints the same
report with page-load times.
"""
import os, re, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import build_book, book_browser, book_ext  # noqa: E402

HTML = Path(os.environ.get("ATTNSTAT_BOOK_HTML", ROOT / "book" / "_build" / "html"))
needs_book = pytest.mark.skipif(not (HTML / "index.html").exists(), reason="book not built: run `make book` (make test does)")
PAGES = book_browser.book_pages(HTML) if HTML.exists() else []

def test_build_keeps_warnings_fatal():
    "The build fails on any warning (unresolved {ref}/{numref}/{doc}, stderr in a page) and on any cell error."
    src = (ROOT / "tools" / "build_book.py").read_text()
    assert re.search(r'"-W"', src) and '"--keep-going"' in src
    cfg = (ROOT / "book" / "_config.yml").read_text()
    assert re.search(r"nb_execution_raise_on_error:\s*true", cfg)
    assert re.search(r"nb_output_stderr:\s*error", cfg)
    assert re.search(r"allow_errors:\s*false", cfg)

def test_directives_become_tags_and_figures():
    "The `#|` conventions of the book: export -> collapsed, hide -> removed, figure directives -> MyST-NB figure metadata."
    cell = lambda src: {"cell_type": "code", "source": src, "metadata": {}}
    src, tags, meta = build_book.cell_tags(cell("#| export\ndef f(x): return x\n"))
    assert tags == ["hide-input"] and "#|" not in src and src.startswith("def f")
    assert build_book.cell_tags(cell("#| hide\nassert True\n"))[1] == ["remove-cell"]
    src, tags, meta = build_book.cell_tags(cell("#| label: fig-risk\n#| fig-cap: Risk vs $\\nu$; D = 400, seed 0.\n"
                                                "#| fig-alt: Two decreasing curves.\nplot()\n"))
    assert src == "plot()\n" and tags == []
    assert meta == {"figure": {"name": "fig-risk", "caption": "Risk vs $\\nu$; D = 400, seed 0."},
                    "image": {"alt": "Two decreasing curves."}}
    # a YAML-quoted caption or alt text is unquoted (the quotes are not shown on the page)
    meta = build_book.cell_tags(cell('#| label: fig-q\n#| fig-cap: "A \\"quoted\\" caption"\n#| fig-alt: \'Alt.\'\nplot()\n'))[2]
    assert meta == {"figure": {"name": "fig-q", "caption": 'A "quoted" caption'}, "image": {"alt": "Alt."}}
    with pytest.raises(ValueError, match="fig-cap"):
        build_book.cell_tags(cell("#| label: fig-x\nplot()\n"))

def test_tex_in_titles_becomes_plain_text():
    "Page titles and search-result titles: inline TeX is rewritten as Unicode text."
    t = book_ext.tex_to_text
    assert t(r"The Bayes-optimal side at finite \(\alpha\)") == "The Bayes-optimal side at finite α"
    assert t(r"Is \(W_K^\top W_Q\) identity plus low rank?") == "Is W_Kᵀ W_Q identity plus low rank?"
    assert t(r"$\mathbb{E} f(\xi)^2$ and $k^*$") == "𝔼 f(ξ)² and k*"
    assert t("no math here") == "no math here"

def test_figure_directives_are_complete():
    "Static check of every notebook (no build needed): each labelled figure has a caption and alt text; labels are unique."
    import json
    bad, seen = [], {}
    for nb in sorted((ROOT / "nbs").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] != "code": continue
            try: _, tags, meta = build_book.cell_tags(cell)
            except ValueError as e: bad.append(f"{nb.stem}: {e}"); continue
            fig = meta.get("figure")
            if not fig: continue
            if not meta.get("image", {}).get("alt"): bad.append(f"{nb.stem}: figure {fig['name']} has no `#| fig-alt:`")
            if not fig["name"].startswith("fig-"): bad.append(f"{nb.stem}: figure label {fig['name']!r} should start with fig-")
            if fig["name"] in seen: bad.append(f"{nb.stem}: figure label {fig['name']} already used in {seen[fig['name']]}")
            seen[fig["name"]] = nb.stem
    assert not bad, "\n".join(bad)

@needs_book
def test_nothing_loaded_from_another_site():
    "Scripts, styles, fonts, images and frames are local; links (Binder, Colab, the repository) are allowed."
    assert build_book.check_offline(HTML) == []
    assert (HTML / "_static" / "embed.js").exists()
    assert (HTML / "mathjax" / "tex-mml-chtml.js").exists(), "MathJax is served from mathjax/ at the site root"
    assert not (HTML / "_static" / "mathjax").exists(), "MathJax must not be under _static (Jupyter Book would load every file)"

@needs_book
def test_pages_have_prerendered_math_and_no_directives_or_stderr():
    "No TeX left to the browser; MathJax and the widget embedder only on pages with widgets; no `#|`, no stderr."
    assert build_book.check_pages(HTML) == []
    assert (HTML / "_static" / build_book.MATH_CSS).exists(), "the stylesheet of the pre-rendered math"
    assert len(list((HTML / "_static" / build_book.FONT_DIR).glob("*.woff"))) >= 20, "the MathJax woff fonts, served locally"
    assert (HTML / "_static" / "favicon.svg").exists()

needs_node = pytest.mark.skipif(not (ROOT / "book" / "node_modules" / "mathjax-full" / "js" / "mathjax.js").exists()
                                or build_book.shutil.which("node") is None, reason="node or book/node_modules missing (npm ci --prefix book)")

@needs_node
def test_prerender_math_on_a_small_page(tmp_path):
    "Inline, display and amsmath math become MathJax CHTML markup; MathJax and embed.js leave a page without widgets."
    (tmp_path / "_static").mkdir()
    page = ('<html><head><script>window.MathJax = {"options": {}}</script>'
            '<script defer="defer" src="_static/../mathjax/tex-mml-chtml.js?v=1"></script>'
            '<script src="_static/embed.js?v=2"></script></head><body>'
            '<p>Risk <span class="math notranslate nohighlight">\\(\\alpha &lt; 1\\)</span>.</p>'
            '<div class="math notranslate nohighlight" id="equation-x"><span class="eqno">(1)</span>\\[E = \\tfrac12\\]</div>'
            '<div class="math notranslate nohighlight">\\begin{align}a &amp;= b\\end{align}</div></body></html>')
    (tmp_path / "p.html").write_text(page)
    summary = build_book.prerender_math(tmp_path)
    out = (tmp_path / "p.html").read_text()
    assert summary["p.html"] == (3, False)
    assert out.count("<mjx-container") == 3 and 'display="true"' in out and '<span class="eqno">(1)</span>' in out
    assert "\\(" not in out and "\\[" not in out and "mathjax" not in out.lower().replace("mjx", "").replace('class="mathjax"', "")
    assert "embed.js" not in out and 'aria-label="\\alpha &lt; 1"' in out
    assert build_book.check_pages(tmp_path) == []
    assert "mjx-c" in (tmp_path / "_static" / build_book.MATH_CSS).read_text()
    build_book.prerender_math(tmp_path)   # idempotent: a second pass leaves the page as it was
    assert (tmp_path / "p.html").read_text() == out

def test_lazy_folds_keep_small_and_open_folds():
    "A large closed fold becomes inert text (with `</script` escaped); small and open folds stay HTML; a second pass changes nothing."
    big = "<div>" + "x" * 2000 + "<script>s()</script></div>"
    page = (f'<details class="sd-sphinx-override sd-dropdown sd-card"><summary>Derivation</summary>{big}</details>'
            '<details class="sd-dropdown"><summary>t</summary><div>small</div></details>'
            f'<details class="sd-dropdown" open="open"><summary>o</summary>{big}</details>')
    out, n = build_book.lazy_folds(page)
    assert n == 1 and out.count('type="text/x-attnstat-fold"') == 1 and "<\\/script>" in out
    assert "<div>small</div>" in out and out.endswith(f"{big}</details>")
    assert build_book.lazy_folds(out) == (out, 0)

def test_search_scorer_is_configured():
    "The search scorer (page titles and headings first) is a Sphinx html_search_scorer, staged next to the config."
    assert re.search(r"html_search_scorer:\s*search_scorer\.js", (ROOT / "book" / "_config.yml").read_text())
    js = (ROOT / "book" / "search_scorer.js").read_text()
    assert "var Scorer" in js and "score:" in js and "alltitles" in js

@needs_book
def test_every_notebook_and_page_is_in_the_book():
    missing = [p.name for p in sorted((ROOT / "nbs").glob("*.ipynb")) + sorted((ROOT / "nbs").glob("*.md"))
               if not p.name.startswith("_") and not (HTML / f"{p.stem}.html").exists()]
    assert not missing, f"no page for {missing}"

@needs_book
def test_every_cross_reference_resolves():
    "An unresolved {ref}/{numref}/{doc} is rendered as a bare `xref` span (the -W build also fails on it)."
    bad = []
    for page in PAGES:
        text = page.read_text(errors="ignore")
        for m in re.finditer(r'<span class="xref std std-(ref|numref|doc)">([^<]*)</span>', text):
            bad.append(f"{page.name}: unresolved {{{m.group(1)}}}`{m.group(2)}`")
        if re.search(r"undefined label|\?\?", re.sub(r"<(script|style|pre)\b[\s\S]*?</\1>", "", text)):
            bad.append(f"{page.name}: 'undefined label' or '??' in the text")
    assert not bad, "\n".join(bad)

@needs_book
def test_launch_buttons_are_links():
    "Notebook pages offer Binder and Colab as plain links to the repository's notebook."
    page = (HTML / "01a_slr_models.html").read_text(errors="ignore")
    assert re.search(r'<a[^>]+href="https://mybinder\.org/v2/gh/attnstat/attnstat/main\?urlpath=tree/nbs/01a_slr_models\.ipynb"', page)
    assert re.search(r'<a[^>]+href="https://colab\.research\.google\.com/github/attnstat/attnstat/blob/main/nbs/01a_slr_models\.ipynb"', page)

@needs_book
def test_titles_are_plain_text():
    bad = []
    for page in PAGES:
        m = re.search(r"<title>(.*?)</title>", page.read_text(errors="ignore"), re.S)
        if m and re.search(r"\\[a-zA-Z]+|\$|\\\(", m.group(1)): bad.append(f"{page.name}: {m.group(1)!r}")
    assert not bad, "raw TeX in page titles:\n" + "\n".join(bad)

@pytest.mark.browser
@needs_book
@pytest.mark.skipif(book_browser.CHROMIUM is None, reason="Chromium is not installed (make chromium)")
def test_every_page_in_the_browser():
    """Every page: no console error or failed request (favicon included), math pre-rendered (no MathJax without widgets),
    load + math ready within the targets on an idle machine, the first search result for an identity is its proof, numbered captions with alt text,
    visible code <= 40% on the theory chapters, no `#|` or "spec", references resolved, widgets alive."""
    pytest.importorskip("playwright.sync_api", reason="the Python package playwright is not installed")
    results = book_browser.check_book(HTML, search=True)
    med, mx = book_browser.load_stats(results)
    n = sum(r["load_s"] is not None for r in results)
    print(f"\npage load + math ready: median {med:.2f} s, max {mx:.2f} s over {n} pages; {book_browser.machine_load()}")
    failing = [r for r in results if r["failures"]]
    # the speed targets hold on an idle machine: on a busy one (load per core above 1) they are reported, not asserted
    l1 = os.getloadavg()[0] / (os.cpu_count() or 1)
    if l1 <= 1.0 and (med > book_browser.LOAD_MEDIAN_S or mx > book_browser.LOAD_MAX_S):
        failing.append({"page": "(all pages)", "failures": [f"page load median {med:.2f} s, max {mx:.2f} s (targets "
                        f"{book_browser.LOAD_MEDIAN_S} s, {book_browser.LOAD_MAX_S} s; {book_browser.machine_load()})"]})
    if failing:   # one message listing every page and every problem on it
        pytest.fail(f"{len(failing)} of {len(results)} pages fail:\n"
                    + "\n".join(f"{r['page']}:\n  - " + "\n  - ".join(r["failures"]) for r in failing), pytrace=False)
