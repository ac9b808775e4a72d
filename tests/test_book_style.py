"""The book's visual code (attnstat.book.style, nbs/05d_book_style.ipynb): statuses and their line styles, curves split in
runs of equal status, legible text in the 672 px column, alt text written from the data; and the chapters that use it
keep the code (issue 32)."""
import io, json, re
from pathlib import Path
import numpy as np
import pytest
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.image import imread
from attnstat.book.style import (Status, STATUS_STYLES, STATUS_LABELS, REFERENCE_STYLE, as_status, status_style, status_runs,
                                 plot_theory, text_px_per_pt, min_points, smallest_text_px, legible, legible_rc, legend_below,
                                 alt_text, verify_alt, COLUMN_PX, MIN_TEXT_PX, _RANK)

NBS = Path(__file__).resolve().parents[1] / "nbs"

def test_styles_are_frozen_and_tell_the_statuses_apart():
    lines = [STATUS_STYLES[s]["ls"] for s in Status if s is not Status.NOT_CONVERGED]
    assert len(set(map(str, lines + [REFERENCE_STYLE["ls"]]))) == len(lines) + 1      # one line style per status, the reference apart
    assert STATUS_STYLES[Status.NOT_CONVERGED]["ls"] == "none" and STATUS_STYLES[Status.NOT_CONVERGED]["marker"] == "x"
    assert set(STATUS_LABELS) == set(Status) == set(STATUS_STYLES)
    with pytest.raises(TypeError): STATUS_STYLES[Status.STABLE]["ls"] = "--"
    assert status_style("unstable") is not status_style("unstable")                   # a new dict each call

@pytest.mark.parametrize("bad, exc, msg", [("instable", ValueError, "status must be one of"), (3, TypeError, "status must be a Status"),
                                           (None, TypeError, "status must be a Status")])
def test_as_status_names_the_parameter(bad, exc, msg):
    with pytest.raises(exc, match=msg): as_status(bad)

def test_runs_take_the_less_trusted_end_and_break_at_failures():
    rng = np.random.default_rng(0)
    values = [s.value for s in Status]
    for _ in range(300):
        sts = [Status(v) for v in rng.choice(values, size=rng.integers(1, 12))]
        runs = status_runs(sts)
        seg = {}
        for st, i, j in runs:
            assert 0 <= i <= j < len(sts)
            for k in range(i, j): seg[k] = st                                         # segment k joins points k and k + 1
        for k in range(len(sts) - 1):
            ends = (sts[k], sts[k + 1])
            if Status.NOT_CONVERGED in ends: assert k not in seg                    # no line through a failed point
            else: assert seg[k] is max(ends, key=_RANK.get)
        lone = {i for st, i, j in runs if i == j}
        for i, s in enumerate(sts):                                                 # every converged point is drawn, once alone at most
            covered = any(i0 <= i <= j0 for _, i0, j0 in runs)
            assert covered == (s is not Status.NOT_CONVERGED)
            if i in lone: assert all(k not in seg for k in (i - 1, i))

def test_plot_theory_labels_and_styles():
    fig, ax = plt.subplots()
    x = np.arange(6.0); y = np.array([1.0, 0.9, 0.8, np.nan, 0.6, 0.5])
    st = ["unstable", "unstable", "stable", "not converged", "stable", "stable"]
    plot_theory(ax, x, y, st, label="replica", color="C3")
    h, l = ax.get_legend_handles_labels()
    assert l == ["replica, RS-unstable", "replica, RS-stable", "replica, not converged"]
    assert [q.get_linestyle() for q in h[:2]] == [":", "-"] and h[0].get_color() == "C3"
    assert h[2].get_transform() != ax.transData                                     # no value: a cross at the foot of the axes
    fig2, ax2 = plt.subplots(); plot_theory(ax2, x[:3], [1, 2, 3], "stable", label="one curve")
    assert ax2.get_legend_handles_labels()[1] == ["one curve"]                      # one trusted status: the label alone
    for bad, msg in [(dict(status=["stable"] * 5), "status must be one status"), (dict(color="C0", linestyle="--"), "kw must not set"),
                     (dict(status="stable", label=3), "label must be a str")]:
        with pytest.raises((TypeError, ValueError), match=msg): plot_theory(ax, x, np.nan_to_num(y), **bad)
    plt.close("all")

def test_text_scale_formula():
    assert text_px_per_pt(6.0, 100) == pytest.approx(100 / 72)                        # 600 px: shown at its size
    assert text_px_per_pt(11.0, 100) == pytest.approx(COLUMN_PX / (72 * 11.0))         # scaled down: the dpi drops out
    assert text_px_per_pt(11.0, 250) == pytest.approx(text_px_per_pt(11.0, 100))
    assert min_points(11.0) == pytest.approx(MIN_TEXT_PX * 72 * 11 / COLUMN_PX)
    with pytest.raises(ValueError, match="width_in"): min_points(-1.0)

@pytest.mark.parametrize("figsize, ncols, below", [((5, 3), 1, False), ((6, 4.2), 1, False), ((8, 6.4), 2, False), ((9, 3.8), 2, True),
                                                   ((11, 4.2), 2, False), ((12, 4), 3, True)])
def test_legible_reaches_9_px_in_the_column(figsize, ncols, below):
    fig, axes = plt.subplots(1, ncols, figsize=figsize, squeeze=False)
    for ax in axes.ravel():
        for k in range(4): ax.plot([0, 1], [0, k], label=f"a long legend entry number {k}")
        ax.set(xlabel="sample ratio α", ylabel="test error", title="panel")
        if not below: ax.legend(fontsize=7)
    fig.tight_layout()
    if below: legend_below(fig, axes[0, 0], ncol=2)
    legible(fig)
    assert smallest_text_px(fig) >= MIN_TEXT_PX - 1e-6
    # the model of the saved width against the image the inline backend writes (bbox_inches="tight", 0.1 in padding)
    buf = io.BytesIO(); fig.savefig(buf, format="png", bbox_inches="tight", dpi=fig.dpi); buf.seek(0)
    width_px = imread(buf).shape[1]
    shown = min(1.0, COLUMN_PX / width_px)
    smallest_pt = min(t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip())
    assert smallest_pt * fig.dpi / 72 * shown >= MIN_TEXT_PX - 0.05, (width_px, smallest_pt)
    plt.close(fig)

def test_legible_rc():
    rc = legible_rc(10.0)
    assert rc["legend.fontsize"] >= min_points(10.0) and legible_rc(5)["font.size"] == 10.0

def test_alt_text_and_its_check():
    t = alt_text("falls from {a:.2f} to {b:.2f}", a=0.438, b=0.066)
    assert t == "falls from 0.44 to 0.07"
    assert verify_alt(t, "#| label: fig-x\n#| fig-alt: falls from 0.44 to 0.07\nplt.show()") is True
    assert verify_alt(t, "plt.show()") is False                                      # the book build strips the directives
    with pytest.raises(ValueError, match="#\\| fig-alt: falls from 0.44 to 0.07"): verify_alt(t, "#| fig-alt: falls from 0.41 to 0.60\n")
    for tpl, kw, msg in [("{a}", {}, "values must fill"), ("{a}", dict(a=1, b=2), "are not in template"), ("{}", dict(a=1), "name its fields"),
                         ("{a}", dict(a=float("inf")), "a must be finite")]:
        with pytest.raises(ValueError, match=msg): alt_text(tpl, **kw)
    with pytest.raises(TypeError): alt_text(3)

# The chapters of this task keep the code: no status line style written by hand in a figure, and every figure cell
# sizes its text with `legible`; the positional chapter writes every alt text from its data.
STYLE_LITERAL = re.compile(r"""(ls|linestyle)\s*=\s*["'](--|:|-\.)["']|["'](C\d|k)?[.osx^vD]?(--|:|-\.)["']|fmt\s*=\s*["'][^"']*(--|:|-\.)""")
def _has_figures(path):
    return any(c["cell_type"] == "code" and re.search(r"^#\| label: fig-", "".join(c["source"]), re.M)
               for c in json.loads(path.read_text())["cells"])

CHAPTERS = sorted(p.stem for p in NBS.glob("*.ipynb") if _has_figures(p))   # every page with a figure (issue 32)
RECIPE = ("interactive_figure(", "draw_figure(")   # drawn by the recipe machinery: legible text, alt text from the rows

def figure_cells(name):
    cells = json.loads((NBS / f"{name}.ipynb").read_text())["cells"]
    return [("".join(c["source"]), c["id"]) for c in cells if c["cell_type"] == "code" and re.search(r"^#\| label: fig-", "".join(c["source"]), re.M)]

@pytest.mark.parametrize("name", CHAPTERS)
def test_chapters_keep_the_visual_code(name):
    for s, cid in figure_cells(name):
        code = [l for l in s.splitlines() if not l.startswith("#|")]
        bad = [l for l in code if STYLE_LITERAL.search(l) and re.search(r"plot|axhline|axvline|errorbar", l)]
        assert not bad, (name, cid, bad)
        if any(r in s for r in RECIPE): continue
        if "precomputed_figure" in s or "precomputed" in s.splitlines()[-1] or re.fullmatch(r"\w+", s.splitlines()[-1].strip()):
            # a precomputed figure: its drawing function (in the notebook) sizes the frames' text
            assert "legible(" in notebook_code(name), (name, cid)
        else:
            assert "legible(" in s, (name, cid)
        assert "verify_alt(alt_text(" in s, (name, cid)   # the alt text is written from the plotted data

def notebook_code(name):
    cells = json.loads((NBS / f"{name}.ipynb").read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")

def test_every_page_with_figures_is_checked():
    assert len(CHAPTERS) >= 25 and {"03d_rmt_vs_ridge", "04_pretrained_weights", "01g_slr_multihead"} <= set(CHAPTERS)

def test_positional_alt_texts_come_from_the_data():
    cells = figure_cells("01f_slr_positional")
    assert len(cells) == 6 and all("verify_alt(alt_text(" in s for s, _ in cells)
    alts = [re.search(r"^#\| fig-alt: (.*)$", s, re.M).group(1) for s, _ in cells]
    assert "0.438" in alts[0] and "0.545" in alts[0] and "0.41" not in alts[0]        # issue 32: the plot gives 0.438 and 0.545
