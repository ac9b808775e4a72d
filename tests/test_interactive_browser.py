"""Interactive figures in static HTML, checked in headless Chromium with no network.

A page with a `precomputed_figure` is opened from a file:// URL with every non-local request
blocked (and recorded). The test moves a slider (keyboard) and a dropdown, and checks that the
image shown changed to the frame precomputed for the new parameter values: the bytes of the
displayed PNG are read back from the page and compared with the frame rendered in Python.
It runs on the built book page (book/_build/html) when the book has been built with a page that
uses `precomputed_figure`, and always on a minimal page written here with `write_html`.
"""
import os, re, shutil, sys, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
import numpy as np
from attnstat.interactive import precomputed_figure, write_html, find_embed_js

pytestmark = pytest.mark.browser
CHROMIUM = (os.environ.get("ATTNSTAT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
            or shutil.which("google-chrome"))
# The built book (override with ATTNSTAT_BOOK_HTML=folder to check another build).
BOOK_HTML = Path(os.environ.get("ATTNSTAT_BOOK_HTML", ROOT / "book" / "_build" / "html"))
LOCAL = ("file:", "data:", "blob:")

@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="the Python package playwright is not installed")
    if CHROMIUM is None: pytest.skip("Chromium is not installed (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                                              "--disable-component-update", "--no-first-run"])
        yield b
        b.close()

def open_offline(browser, path):
    "Open a local page with every request that is not local aborted; returns (page, attempted remote URLs, errors)."
    page = browser.new_page(viewport={"width": 1200, "height": 1600})
    remote, errors = [], []
    def route(r):
        if r.request.url.startswith(LOCAL): r.continue_()
        else: remote.append(r.request.url); r.abort()
    page.route("**/*", route)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(Path(path).resolve().as_uri())
    return page, remote, errors

SHOWN_JS = """async (fig) => {
  const imgs = Array.from(fig.querySelectorAll('img.attnstat-frame')).filter(i => i.offsetParent !== null);
  if (imgs.length !== 1) return {n: imgs.length};
  const buf = await (await fetch(imgs[0].src)).arrayBuffer();
  return {n: 1, cls: imgs[0].className, bytes: Array.from(new Uint8Array(buf))};
}"""

def shown(fig):
    "(frame indices from the CSS classes, PNG bytes) of the one visible frame of a figure element."
    out = fig.evaluate(SHOWN_JS)
    assert out["n"] == 1, f"expected exactly one visible frame, found {out['n']}"
    idx = tuple(int(j) for _, j in sorted((int(l), j) for l, j in re.findall(r"attnstat-p(\d+)-(\d+)", out["cls"])))
    return idx, bytes(out["bytes"])

def wait_for(cond, timeout=5.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = cond()
        if v: return v
        time.sleep(0.05)
    return cond()

def press_slider(page, fig, key="ArrowRight"):
    handle = fig.query_selector(".noUi-handle")
    assert handle is not None, "no slider in the figure"
    handle.focus(); page.keyboard.press(key)

def _curve(ax, slope=1.0, kind="line"):
    x = np.linspace(0, 1, 30)
    ax.plot(x, slope * (x if kind == "line" else x**2), label=f"{kind}, slope {slope:g}")
    ax.set_ylim(0, 4); ax.set_xlabel("x"); ax.set_ylabel("y"); ax.legend()

def test_minimal_page(browser, tmp_path):
    embed = find_embed_js(ROOT)
    if embed is None: pytest.skip("@jupyter-widgets/html-manager is not installed (run `npm ci` in book/)")
    fig = precomputed_figure(_curve, {"slope": [0.5, 1.0, 2.0, 4.0], "kind": ["line", "square"]})
    page_path = write_html(fig, tmp_path / "figure.html", embed)
    page, remote, errors = open_offline(browser, page_path)
    try:
        el = page.wait_for_selector(".attnstat-precomputed", timeout=15000)
        page.wait_for_selector("img.attnstat-frame", timeout=15000)
        idx, png = shown(el)
        assert idx == (0, 0) and png == fig.frames[(0, 0)][1]
        press_slider(page, el)                       # slope 0.5 -> 1.0
        assert wait_for(lambda: shown(el)[0] == (1, 0)), f"slider move did not change the frame: {shown(el)[0]}"
        assert shown(el)[1] == fig.frames[(1, 0)][1] != png # the plotted data changed to the precomputed frame
        press_slider(page, el); press_slider(page, el) # -> 4.0
        assert wait_for(lambda: shown(el)[0] == (3, 0))
        el.query_selector("select").select_option(index=1) # kind: line -> square
        assert wait_for(lambda: shown(el)[0] == (3, 1))
        assert shown(el)[1] == fig.frames[(3, 1)][1]
        assert "4" in el.inner_text() # the slider's readout shows the new value
    finally:
        page.close()
    assert remote == [], f"the page tried to reach the network: {remote}"
    assert not [e for e in errors if "Could not create a view" in e], errors

def _book_pages():
    if not BOOK_HTML.exists(): return []
    return sorted(p for p in BOOK_HTML.glob("*.html") if "attnstat-precomputed" in p.read_text(errors="ignore"))

def test_built_book_page(browser):
    pages = _book_pages()
    if not pages:
        pytest.skip(f"no built book page with a precomputed figure under {BOOK_HTML} (build the book first)")
    for path in pages:
        page, remote, errors = open_offline(browser, path)
        try:
            page.wait_for_selector("img.attnstat-frame", timeout=20000)
            figs = page.query_selector_all(".attnstat-precomputed")
            assert figs, f"{path.name}: no rendered precomputed figure"
            for el in figs:
                el.scroll_into_view_if_needed()
                idx, png = shown(el)
                # the first control in the page's order drives the first index of the grid
                handle, sel = el.query_selector(".noUi-handle"), el.query_selector("select")
                slider_first = handle is not None and (sel is None or handle.evaluate(
                    "(h, s) => !!(s.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_PRECEDING)", sel))
                if slider_first:
                    press_slider(page, el, "ArrowRight" if idx[0] == 0 else "ArrowLeft")
                else:
                    sel.select_option(index=1 if idx[0] == 0 else 0)
                new = wait_for(lambda: shown(el)[0] != idx and shown(el))
                assert new, f"{path.name}: moving the first control did not change the frame {idx}"
                assert new[0][0] == (1 if idx[0] == 0 else idx[0] - 1) and new[0][1:] == idx[1:]
                assert new[1] != png, f"{path.name}: the image data did not change"
        finally:
            page.close()
        assert remote == [], f"{path.name} tried to reach the network: {remote[:5]}"
        assert not [e for e in errors if "Could not create a view" in e], errors
