"""The built book: typeset math, figures and widgets render offline in headless Chromium.

`make test` builds the book before running pytest; these tests read book/_build/html.
"""
import re, shutil, subprocess
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "book" / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_book = pytest.mark.skipif(not (HTML / "index.html").exists(), reason="book not built: run `make book` (make test does)")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed and could not be installed (apt-get install chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--hide-scrollbars",
         "--disable-component-update", "--no-first-run", "--virtual-time-budget=20000"]

def chromium(*args, timeout=120):
    r = subprocess.run([CHROMIUM, *FLAGS, *args], capture_output=True, text=True, timeout=timeout)
    return r.stdout

@needs_book
def test_no_offsite_scripts_styles_or_fonts():
    pat = re.compile(r"<(?:script|link)\b[^>]*\b(?:src|href)\s*=\s*[\"'](?:https?:)?//", re.I)
    offenders = [p.name for p in HTML.rglob("*.html") if pat.search(p.read_text(errors="ignore"))]
    assert not offenders, f"pages load off-site assets: {offenders}"
    assert (HTML / "_static" / "embed.js").exists() and (HTML / "_static" / "mathjax" / "tex-mml-chtml.js").exists()

@needs_book
def test_every_notebook_has_a_page_without_nbdev_directives():
    for nb in (ROOT / "nbs").glob("*.ipynb"):
        page = HTML / f"{nb.stem}.html"
        assert page.exists(), f"no page for {nb.name}"
        assert "#| export" not in page.read_text(errors="ignore") and "default_exp" not in page.read_text(errors="ignore")

@needs_book
@needs_chromium
def test_core_chapter_renders_math_figure_and_widget(tmp_path):
    page = HTML / "00c_core_at_work.html"
    dom = chromium("--dump-dom", page.as_uri())
    # MathJax replaced the TeX by rendered containers (raw $$ would remain otherwise)
    assert dom.count("<mjx-container") >= 10, "math was not typeset"
    assert "$$" not in re.sub(r"<(script|pre|code)[\s\S]*?</\1>", "", dom)
    # the figure is an embedded image that exists on disk
    imgs = re.findall(r'<img[^>]+src="(_images/[^"]+\.png)"', dom)
    assert imgs and all((HTML / i).exists() and (HTML / i).stat().st_size > 5000 for i in imgs)
    # the ipywidgets slider rendered from saved state, exactly once (no double rendering)
    assert dom.count("widget-slider") >= 1
    assert dom.count('class="widget-label"') == 1
    # and a screenshot is not blank
    shot = tmp_path / "page.png"
    chromium("--window-size=1280,2400", f"--screenshot={shot}", page.as_uri())
    assert shot.exists() and shot.stat().st_size > 50_000
