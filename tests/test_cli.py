"""The `attnstat` command: every subcommand, --help, --json, one-line errors with exit status 2, reproduce --quick."""
import json, subprocess, sys
from pathlib import Path
import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
from attnstat.cli import cli
from attnstat.book.figures import FIGURES
from attnstat.sweep import read_sweep
from attnstat import __version__

def run(*args):
    # mix_stderr was removed in click 8.2, where stdout and stderr are captured apart by default
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)

def one_line_error(res):
    "The error output: exactly one non-empty line starting with 'Error:' and no traceback."
    err = (res.stderr if hasattr(res, "stderr") else res.output).strip()
    assert "Traceback" not in res.output and "Traceback" not in err
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    return lines[0]

# Each subcommand with cheap arguments; the JSON keys checked are the ones scripts rely on.
CASES = {
    "slr bayes": (["slr", "bayes", "--nu", "2", "--L", "3"], ["risk", "excess", "method"]),
    "slr population (optimal)": (["slr", "population", "--nu", "1", "--activation", "linear"], ["risk", "m_k", "q_k"]),
    "slr population (overlaps)": (["slr", "population", "--nu", "1", "--m-k", "0.5", "--q-k", "0.5", "--m-v", "0.5",
                                   "--q-v", "0.5"], ["risk", "A", "B"]),
    "slr bayes (finite alpha)": (["slr", "bayes", "--nu", "2", "--alpha", "2", "--n-mc", "1000"], ["error", "risk", "q_k"]),
    "slr replica": (["slr", "replica", "--nu", "2", "--activation", "softmax", "--alpha", "2", "--n-mc", "300"],
                    ["alpha", "test_error", "converged", "m_k"]),
    "slr simulate": (["slr", "simulate", "--nu", "2", "--alpha", "2", "--D", "20", "--n-test", "200"],
                     ["test_error", "train_loss", "m_k", "converged"]),
    "rmt hermite": (["rmt", "hermite", "--f", "relu"], ["a0", "a1", "sigma2"]),
    "rmt error": (["rmt", "error", "--f", "tanh", "--c", "0.5", "--gamma", "0.1,1", "--snr", "2", "--phi", "0.3"],
                  ["gamma", "E_attn", "E_rr", "difference"]),
    "rmt simulate": (["rmt", "simulate", "--n", "48", "--p", "24", "--trials", "2", "--gamma", "0.1,1"],
                     ["gamma", "attention", "ridge", "attention_se"]),
    "rmt error --test-error": (["rmt", "error", "--gamma", "0.1,1", "--test-error"], ["E_test_attn", "E_test_rr", "E_attn", "E_rr"]),
    "rmt error --scale-invariant": (["rmt", "error", "--gamma", "0.1,1", "--scale-invariant"], ["gamma_attn", "gamma_rr", "E_attn"]),
    "slr amp": (["slr", "amp", "--nu", "2", "--alpha", "2", "--D", "40", "--n-test", "200"], ["test_error", "m_k", "n_iter", "converged"]),
    "slr bayes-branches": (["slr", "bayes-branches", "--nu", "2", "--alpha", "2", "--n-mc", "1000"],
                           ["u_error", "i_error", "equilibrium", "coexist"]),
    "slr dynamics": (["slr", "dynamics", "--nu", "2", "--L", "3", "--t-max", "1", "--n-mc", "512", "--n-out", "3"],
                     ["m_k", "q_k", "m_k_err", "risk", "converged", "diverged"]),
    "slr dynamics --D": (["slr", "dynamics", "--nu", "2", "--t-max", "0.5", "--n-mc", "512", "--n-out", "2", "--eta", "1", "--D", "50"],
                         ["m_k", "sgd_m_k", "sgd_t"]),
    "slr simulate --restarts": (["slr", "simulate", "--nu", "2", "--alpha", "2", "--D", "10", "--n-test", "100", "--restarts", "2"],
                                ["test_error", "restarts", "min_energies"]),
    "rmt error --p": (["rmt", "error", "--gamma", "0.1", "--snr", "2", "--p", "128"], ["epsilon", "p", "E_attn", "E_rr", "converged"]),
    "slr bayes --presence": (["slr", "bayes", "--nu", "3", "--L", "4", "--presence", "0.5", "--n-mc", "1000"],
                             ["risk", "err", "sink_star", "excess"]),
    "slr population --presence": (["slr", "population", "--nu", "3", "--L", "4", "--presence", "0.5", "--activation", "sink",
                                   "--n-mc", "512"], ["risk", "err", "sink", "sink_star", "M", "Q"]),
    "slr dynamics --heads": (["slr", "dynamics", "--nu", "2", "--heads", "2", "--features", "2", "--t-max", "0.5", "--n-mc", "256",
                              "--n-rep", "2", "--n-out", "2"], ["m_k_1_1", "m_v_2_2", "risk", "risk_err"]),
}

@pytest.mark.parametrize("name", list(CASES))
def test_subcommand_text_and_json(name):
    args, keys = CASES[name]
    text = run(*args)
    assert text.exit_code == 0, text.output
    assert all(k in text.output for k in keys[:1])
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout) # strict JSON on stdout
    assert all(k in data for k in keys), (keys, list(data))

def test_values_match_library():
    "The command prints what the library returns for the same parameter names."
    from attnstat.slr.models import SpikedSLR
    from attnstat.slr.population import bayes_risk
    from attnstat.rmt.theory import ridge_error
    data = json.loads(run("slr", "bayes", "--nu", "2", "--L", "3", "--noise", "0.1", "--json").stdout)
    assert data["risk"] == pytest.approx(bayes_risk(SpikedSLR(3, 2.0, noise=0.1)).risk, rel=1e-12)
    data = json.loads(run("rmt", "error", "--c", "0.5", "--gamma", "0.1,1", "--snr", "2", "--json").stdout)
    assert data["E_rr"] == pytest.approx(ridge_error(c=0.5, gamma=[0.1, 1.0], snr=2.0), rel=1e-12)

def test_help_everywhere():
    for group, subs in cli.commands.items():
        assert run(group, "--help").exit_code == 0
        for sub in getattr(subs, "commands", {}):
            res = run(group, sub, "--help")
            assert res.exit_code == 0 and "--json" in res.output, (group, sub)
    assert __version__ in run("--version").output

@pytest.mark.parametrize("args, option, rng", [
    (["slr", "bayes", "--nu", "-1"], "--nu", "[0.0, inf]"),
    (["slr", "bayes", "--nu", "1", "--noise", "-0.5"], "--noise", "noise must lie in [0.0, "),
    (["slr", "bayes", "--nu", "1", "--L", "0"], "--L", "1"),
    (["slr", "population", "--nu", "1", "--m-k", "1", "--q-k", "0.5", "--m-v", "0", "--q-v", "0"], "--q-k", "m_k^2"),
    (["slr", "population", "--nu", "1", "--activation", "relu"], "--activation", "softmax"),
    (["slr", "replica", "--nu", "1", "--alpha", "-1"], "--alpha", "(0.0, 100000.0]"), # replica_erm: alpha <= 1e5 (issue 19)
    (["slr", "replica", "--nu", "1", "--alpha", "1", "--lam", "0"], "--lam", "(0.0, inf]"),
    (["slr", "simulate", "--nu", "1", "--alpha", "1", "--D", "1"], "--D", "[2, inf]"),
    (["slr", "bayes", "--nu", "1", "--alpha", "0"], "--alpha", "alpha must lie in (0.0, "),
    (["rmt", "error", "--c", "-1"], "--c", "c must lie in"),
    (["rmt", "error", "--gamma", "0,1"], "--gamma", "(0"),
    (["rmt", "simulate", "--n", "1"], "--n", "[2, inf]"),
    (["rmt", "hermite", "--f", "nope"], "--f", "tanh"),
    (["reproduce", "--jobs", "0"], "--jobs", "[1, "),
    (["reproduce", "--jobs", "100000"], "--jobs", "(4 per core)"),
    (["reproduce", "--only", "no_such_figure"], "--only", sorted(FIGURES)[0]),
    (["reproduce", "--backend", "dask"], "--scheduler", "tcp://"),
])
def test_bad_value_one_line_exit_2(args, option, rng):
    res = run(*args)
    assert res.exit_code == 2, res.output
    line = one_line_error(res)
    assert option in line and rng in line, line

def test_new_flags_match_library():
    "--test-error and --scale-invariant print what attnstat.rmt computes; --restarts reaches simulate_erm."
    import numpy as np
    from attnstat.rmt import ridge_test_error, compare_attention_ridge, aligned_vectors
    data = json.loads(run("rmt", "error", "--gamma", "0.1,1", "--snr", "2", "--test-error", "--json").stdout)
    np.testing.assert_allclose(data["E_test_rr"], ridge_test_error(c=0.5, gamma=np.array([0.1, 1.0]), snr=2.0), rtol=1e-12)
    mu, wk, wq = aligned_vectors(2.0, 1.0, 0.0)
    ref = compare_attention_ridge("tanh", c=0.5, gamma=np.array([0.1, 1.0]), mu=mu, w_K=wk, w_Q=wq, scale="relative")
    data = json.loads(run("rmt", "error", "--gamma", "0.1,1", "--snr", "2", "--scale-invariant", "--json").stdout)
    np.testing.assert_allclose(data["E_attn"], ref["E_attn"], rtol=1e-12)
    res = run("rmt", "error", "--scale", "dof", "--scale-invariant")
    assert res.exit_code == 2 and "--scale-invariant" in one_line_error(res)
    data = json.loads(run("slr", "simulate", "--nu", "2", "--alpha", "2", "--D", "10", "--n-test", "100", "--restarts", "2",
                          "--json").stdout)
    assert data["restarts"] == 2
    res = run("slr", "simulate", "--nu", "2", "--alpha", "2", "--restarts", "0")
    assert res.exit_code == 2 and "--restarts" in one_line_error(res)

def test_amp_and_branches_match_library():
    from attnstat.slr import SpikedSLR, simulate_amp, bayes_optimal_branches
    data = json.loads(run("slr", "amp", "--nu", "2", "--alpha", "2", "--D", "40", "--n-test", "200", "--L", "3", "--json").stdout)
    ref = simulate_amp(SpikedSLR(3, 2.0), 2.0, 40, seed=0, n_test=200)
    assert data["test_error"] == pytest.approx(ref.test_error, rel=1e-12) and data["N"] == ref.N
    data = json.loads(run("slr", "bayes-branches", "--nu", "2", "--alpha", "2", "--n-mc", "1000", "--json").stdout)
    ref = bayes_optimal_branches(SpikedSLR(2, 2.0), 2.0, n_mc=1000, seed=0)
    assert data["error_bayes"] == pytest.approx(ref.bayes.error, rel=1e-12) and data["equilibrium"] == ref.equilibrium

def test_missing_overlaps_and_bad_type():
    res = run("slr", "population", "--nu", "1", "--m-k", "0.5")
    assert res.exit_code == 2 and "--q-k" in one_line_error(res)
    res = run("slr", "bayes", "--nu", "abc")
    assert res.exit_code == 2 and "--nu" in one_line_error(res)

def test_console_script_module_entry():
    "The module runs as a script (python -m attnstat.cli) with the same one-line error and exit status."
    p = subprocess.run([sys.executable, "-m", "attnstat.cli", "slr", "bayes", "--nu", "-2"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "--nu" in p.stderr, p.stderr

def test_reproduce_quick_one_figure(tmp_path):
    "reproduce --quick --only attention_vs_ridge writes CSV (with header), PNG and PDF, and resumes from the CSV."
    name = "attention_vs_ridge"
    res = run("reproduce", "--quick", "--only", name, "--out", str(tmp_path), "--jobs", "2")
    assert res.exit_code == 0, res.output
    for ext in ("csv", "png", "pdf"):
        f = tmp_path / f"{name}-quick.{ext}"
        assert f.exists() and f.stat().st_size > 1000, f
    header, rows = read_sweep(tmp_path / f"{name}-quick.csv")
    assert header["version"] == __version__ and header["seed"] == FIGURES[name].seed
    assert header["params"]["quick"] is True and header["params"]["figure"] == name
    assert len(rows) == len(FIGURES[name].points(True))
    assert name in res.stdout and "seconds" in res.stdout # the summary table
    # Interrupted run: drop half of the rows; the rerun recomputes only those and reports the rest as cached.
    lines = (tmp_path / f"{name}-quick.csv").read_text().splitlines(keepends=True)
    keep = [l for l in lines if l.startswith("#")] + [l for l in lines if not l.startswith("#")][: 1 + len(rows) // 2]
    (tmp_path / f"{name}-quick.csv").write_text("".join(keep))
    res = run("reproduce", "--quick", "--only", name, "--out", str(tmp_path), "--json", "--no-progress")
    summary = json.loads(res.stdout)["figures"][0]
    assert summary["cached"] == len(rows) // 2 and summary["points"] == len(rows)
    assert read_sweep(tmp_path / f"{name}-quick.csv")[1].__len__() == len(rows)

def _toy_point(x, seed=None):
    import numpy as np
    return {"y": x * x, "draw": float(np.random.default_rng(seed).normal())}

def _toy_plot(fig, rows, quick):
    ax = fig.subplots(); ax.plot([r["x"] for r in rows], [r["y"] for r in rows], "o-", label="toy"); ax.legend()

def test_reproduce_on_dask_cluster(tmp_path, monkeypatch):
    "attnstat reproduce --backend dask --scheduler ADDRESS on a LocalCluster bound to 127.0.0.1."
    distributed = pytest.importorskip("dask.distributed", reason="the optional 'cluster' extra is not installed")
    import attnstat.book.figures as F
    toy = F.FigureRecipe("toy", "toy", lambda q: [{"x": float(x)} for x in range(6)], _toy_point, _toy_plot,
                         lambda q: {"n": 6}, seed=4, seconds=(1, 1))
    monkeypatch.setattr(F, "FIGURES", {"toy": toy})
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        res = run("reproduce", "--quick", "--only", "toy", "--out", str(tmp_path), "--backend", "dask", "--scheduler",
                  cluster.scheduler_address, "--json", "--no-progress")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["figures"][0]["points"] == 6
    header, rows = read_sweep(tmp_path / "toy-quick.csv")
    assert sorted(r["y"] for r in rows) == [x * x for x in range(6)] and header["seed"] == 4
    # the same sweep with local processes gives the same rows (seeds depend on the points only)
    local = run("reproduce", "--quick", "--only", "toy", "--out", str(tmp_path / "local"), "--jobs", "1", "--no-progress")
    assert local.exit_code == 0
    assert sorted(map(str, read_sweep(tmp_path / "local" / "toy-quick.csv")[1])) == sorted(map(str, rows))

@pytest.mark.slow
def test_readme_command_lines_run():
    "Every `attnstat slr|rmt ...` line of the README's command-line block runs and prints a result."
    import re, shlex
    block = re.search(r"## Command line\s+```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    lines = [l.split("#")[0].strip() for l in block.splitlines() if l.startswith("attnstat slr") or l.startswith("attnstat rmt")]
    assert len(lines) >= 5
    for line in lines:
        res = run(*shlex.split(line)[1:])
        assert res.exit_code == 0, (line, res.output)

# --- issue 22: help text, JSON null, progress, the book's figures ------------------------------------------------

def _all_commands():
    "(path, command) of every command and group under `attnstat`."
    import click
    out, todo = [], [((), cli)]
    while todo:
        path, cmd = todo.pop()
        out.append((path, cmd))
        if isinstance(cmd, click.Group): todo += [(path + (n,), c) for n, c in cmd.commands.items()]
    return out

def test_help_summaries_are_whole():
    "`attnstat --help` and the group helps show each command's whole summary (click cuts it at the column width)."
    import click
    for path, cmd in _all_commands():
        if not isinstance(cmd, click.Group): continue
        text = " ".join(run(*path, "--help").output.split())
        for name, sub in cmd.commands.items():
            summary = " ".join((sub.help or "").split("\n\n")[0].split())
            assert summary and summary in text, (path, name, summary)
        assert "..." not in text.split("Commands:")[1], path   # (the usage line's "[ARGS]..." is click's)

def test_help_lists_one_spelling_per_option():
    "An option with a dashed and an underscore spelling is listed once (both still work); --mc-seed is a hidden alias."
    import click
    for path, cmd in _all_commands():
        if isinstance(cmd, click.Group): continue
        text = run(*path, "--help").output
        for p in cmd.params:
            if not isinstance(p, click.Option): continue
            for o in p.opts:
                if o.startswith("--") and "_" in o and o.replace("_", "-") in p.opts: assert o not in text, (path, o)
        assert "--mc-seed" not in text and "--mc_seed" not in text, path
    a = run("slr", "simulate", "--nu", "2", "--alpha", "2", "--D", "10", "--n_test", "50", "--json")
    b = run("slr", "simulate", "--nu", "2", "--alpha", "2", "--D", "10", "--n-test", "50", "--json")
    assert a.exit_code == 0 and b.exit_code == 0
    assert json.loads(a.stdout)["test_error"] == json.loads(b.stdout)["test_error"]   # the same run (timings aside)

def test_restarts_default_shown():
    assert "[default: (none: a single start)]" in " ".join(run("slr", "simulate", "--help").output.split())

def test_json_writes_nonfinite_as_null():
    "JSON has no inf or nan: they are written as null (the --json help says so), never as strings."
    from attnstat.cli import to_jsonable, emit
    assert to_jsonable({"u": float("inf"), "v": float("-inf"), "w": float("nan"), "x": 1.5}) == {"u": None, "v": None, "w": None, "x": 1.5}
    res = run("slr", "bayes", "--help")
    assert "inf and nan are written as null" in " ".join(res.output.split())
    # a result with an infinite field, through a real command: max-SLR at nu = inf has an infinite nu
    res = run("slr", "bayes", "--model", "max", "--nu", "inf", "--L", "2", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["nu"] is None and '"inf"' not in res.stdout and "Infinity" not in res.stdout

def test_progress_line_on_a_terminal(tmp_path):
    "On a terminal, a command that runs longer than 2 s shows a tqdm line with the elapsed time on stderr; piped, nothing."
    import os, pty, select, time
    code = ("import time, attnstat.cli as c\n"
            "@c.slr.command('sleepy')\n@c.library_errors\ndef sleepy():\n    time.sleep(3.5); c.emit({'done': 1})\n"
            "c.main(['slr', 'sleepy'])\n")
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(COLUMNS="100", LINES="40")
        os.execv(sys.executable, [sys.executable, "-c", code])
    import fcntl, struct, termios
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    out, t0 = b"", time.time()
    while time.time() - t0 < 60:
        r, _, _ = select.select([fd], [], [], 1.0)
        if r:
            try: chunk = os.read(fd, 4096)
            except OSError: break
            if not chunk: break
            out += chunk
    os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    assert "attnstat slr sleepy: running" in text and "elapsed" in text and "done" in text, text
    piped = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and "elapsed" not in piped.stderr and piped.stderr.strip() == ""

def test_reproduce_list_shows_every_book_figure():
    "--list shows every `#| label: fig-` cell of the book with its chapter and how it is reproduced."
    import re
    cells = 0
    for p in sorted((ROOT / "nbs").glob("[!_]*.ipynb")):
        for c in json.loads(p.read_text())["cells"]:
            if c["cell_type"] == "code" and re.search(r"^\s*#\|\s*label:\s*fig-", "".join(c["source"]), re.M): cells += 1
    res = run("reproduce", "--list", "--json")
    data = json.loads(res.stdout)
    assert len(data["figure"]) == cells >= 46 and len(set(data["figure"])) == cells
    assert set(data["reproduced_by"]) == {"chapter"} | {f"recipe {n}" for n in FIGURES}
    assert data["chapter"][data["figure"].index("fig-slr-samples")] == "01a_slr_models"

def test_reproduce_a_chapter_figure(tmp_path):
    "reproduce --quick --only fig-LABEL runs the chapter from its cached data and writes the figure; the estimate is printed."
    res = run("reproduce", "--quick", "--only", "fig-mehler", "--out", str(tmp_path), "--no-progress", "--json")
    assert res.exit_code == 0, res.output
    fig = json.loads(res.stdout)["figures"]
    assert [f["figure"] for f in fig] == ["fig-mehler"] and fig[0]["estimate"] > 0
    assert (tmp_path / "fig-mehler.png").read_bytes()[:4] == b"\x89PNG"
    # the measured time is recorded and becomes the next estimate (the estimate is checked against the measured time)
    from attnstat.book.figures import load_times
    assert "chapter:03a_rmt_hermite:fig-mehler:quick" in load_times(tmp_path)   # measured work, for the next estimate
    again = json.loads(run("reproduce", "--quick", "--only", "fig-mehler", "--out", str(tmp_path), "--no-progress", "--json").stdout)
    assert again["figures"][0]["estimate"] > 0 and again["figures"][0]["files"]

# --- issue 30 item 2: the finite-p theory from the command line ----------------------------------------------------

def test_rmt_error_finite_p_matches_library():
    "rmt error --p prints strong_signal_error at the epsilon that p gives, and the closed-form ridge error."
    import numpy as np
    from attnstat.rmt import aligned_vectors, ridge_error
    from attnstat.rmt.strong_signal import strong_signal_error, score_signal
    mu, wk, wq = aligned_vectors(2.0, 1.0, 0.3)
    data = json.loads(run("rmt", "error", "--gamma", "0.1,1", "--snr", "2", "--phi", "0.3", "--p", "256", "--json").stdout)
    np.testing.assert_allclose(data["E_attn"], strong_signal_error("tanh", c=0.5, gamma=[0.1, 1.0], mu=mu, w_K=wk, w_Q=wq, p=256),
                               rtol=1e-12)
    np.testing.assert_allclose(data["E_rr"], ridge_error(c=0.5, gamma=[0.1, 1.0], snr=2.0), rtol=1e-12)
    assert data["p"] == 256 and data["epsilon"] == pytest.approx(score_signal(mu, wk, wq, 256), rel=1e-12)
    # epsilon from its definition (||mu||^2 + (mu.w_K)(mu.w_Q))/sqrt(p), with mu = sqrt(2) e_1 and w at angle 0.3
    assert data["epsilon"] == pytest.approx((2 + 2 * np.cos(0.3) ** 2) / 16, rel=1e-12)
    assert all(data["converged"])

@pytest.mark.parametrize("extra, what", [
    (["--residual", "concat"], "--residual concat"), (["--residual", "sum", "--test-error"], "--test-error"),
    (["--heads", "3", "--head-family", "hetero"], "at most 3 dimensions"), (["--scale-invariant"], "--scale"),
    (["--scale", "dof"], "--scale"), (["--diag", "0.1"], "--diag"),
])
def test_rmt_error_finite_p_refuses_uncovered_readouts(extra, what):
    "--p with a readout the finite-p derivation does not cover: one line saying so, exit 2."
    res = run("rmt", "error", "--gamma", "1", "--p", "256", *extra)
    assert res.exit_code == 2
    line = one_line_error(res)
    assert "finite-p theory (--p) does not cover" in line and what in line, line
    assert "residual=" not in line and "error=" not in line    # command-line spellings, not Python's

@pytest.mark.parametrize("p", ["63", "2", "0", "-5"])
def test_rmt_error_finite_p_below_p_min(p):
    "--p below strong_signal.P_MIN (64): one line naming --p and the bound, exit 2."
    from attnstat.rmt.strong_signal import P_MIN
    res = run("rmt", "error", "--gamma", "1", "--p", p)
    assert res.exit_code == 2
    line = one_line_error(res)
    assert "'--p'" in line and f"p >= {P_MIN}" in line, line

# aligned weights (--phi 0): mu, w_K, w_Q span one direction, the signal kernel is small and each call takes < 1 s
_ALIGNED = ("--snr", "2", "--phi", "0", "--c", "0.25", "--gamma", "0.01,1")

def test_rmt_error_finite_p_test_error_matches_library():
    "rmt error --p --test-error: strong_signal_test_theory's fresh-token errors, ridge's in its .ridge field."
    import numpy as np
    from attnstat.rmt import aligned_vectors
    from attnstat.rmt.generalisation import ridge_test_error
    from attnstat.rmt.strong_signal import strong_signal_test_theory, score_signal
    mu, wk, wq = aligned_vectors(2.0, 1.0, 0.0)
    data = json.loads(run("rmt", "error", *_ALIGNED, "--p", "96", "--test-error", "--json").stdout)
    t = strong_signal_test_theory("tanh", c=0.25, gamma=[0.01, 1.0], mu=mu, w_K=wk, w_Q=wq, p=96)
    np.testing.assert_allclose(data["E_test_attn"], t.error, rtol=1e-12)
    np.testing.assert_allclose(data["E_test_rr"], ridge_test_error(c=0.25, gamma=[0.01, 1.0], snr=2.0), rtol=1e-12)
    np.testing.assert_allclose(data["test_difference"], t.error - t.ridge, rtol=1e-12)
    assert data["p"] == 96 and data["epsilon"] == pytest.approx(score_signal(mu, wk, wq, 96), rel=1e-12)
    assert data["epsilon"] == pytest.approx(4 / np.sqrt(96), rel=1e-12)   # (||mu||^2 + ||mu||^2 r^2)/sqrt(p)
    assert all(data["converged"]) and "E_attn" not in data

@pytest.mark.parametrize("extra, kw", [
    (["--heads", "2", "--head-mode", "sum"], {"heads": "sum"}),
    (["--heads", "2"], {"heads": "average"}),
    (["--residual", "sum"], {"residual": "sum"}),
    (["--heads", "2", "--test-error"], {"error": "test"}),
])
def test_rmt_error_finite_p_readouts_match_library(extra, kw):
    "rmt error --p with several heads or --residual sum: strong_signal_readout_theory with the same options."
    import numpy as np
    from attnstat.rmt import aligned_vectors
    from attnstat.rmt.strong_signal import strong_signal_readout_theory, score_signal
    mu, wk, wq = aligned_vectors(2.0, 1.0, 0.0)
    H = 2 if "--heads" in extra else 1
    data = json.loads(run("rmt", "error", *_ALIGNED, "--p", "96", *extra, "--json").stdout)
    t = strong_signal_readout_theory("tanh", c=0.25, gamma=[0.01, 1.0], mu=mu, W_K=np.tile(wk[:, None], (1, H)),
                                     W_Q=np.tile(wq[:, None], (1, H)), p=96, **kw)
    pre = "E_test_" if kw.get("error") == "test" else "E_"
    np.testing.assert_allclose(data[pre + "attn"], t.error, rtol=1e-12)
    np.testing.assert_allclose(data[pre + "rr"], t.ridge, rtol=1e-12)
    assert data["heads"] == H and data["residual"] == kw.get("residual", "none") and all(data["converged"])
    assert data["epsilon"] == pytest.approx([score_signal(mu, wk, wq, 96)] * H, rel=1e-12)

# --- issue 31 item 6: several heads and features, the sink ---------------------------------------------------------

def test_slr_bayes_presence_matches_library():
    "bayes --presence: mf_bayes_risk of MultiFeatureSLR with the same draws; C* = (1 - p) L e^(nu/2)/p; K features."
    import math
    from attnstat.slr.multihead import MultiFeatureSLR, mf_bayes_risk
    data = json.loads(run("slr", "bayes", "--nu", "3", "--L", "4", "--presence", "0.5", "--n-mc", "4096", "--seed", "1",
                          "--json").stdout)
    ref = mf_bayes_risk(MultiFeatureSLR(4, 3.0, 0.5), n=4096, seed=1)
    assert data["risk"] == ref.risk and data["err"] == ref.err and data["presence"] == [0.5]
    assert data["sink_star"][0] == pytest.approx(0.5 * 4 * math.exp(1.5) / 0.5, rel=1e-12)
    data = json.loads(run("slr", "bayes", "--nu", "3", "--nu", "2", "--L", "4", "--presence", "0.5", "--presence", "0.8",
                          "--n-mc", "2048", "--json").stdout)
    ref = mf_bayes_risk(MultiFeatureSLR(4, (3.0, 2.0), (0.5, 0.8)), n=2048, seed=0)
    assert data["features"] == 2 and data["risk"] == ref.risk and data["excess"] == list(ref.excess)
    # one feature present everywhere: today's exact answer, not a Monte Carlo one
    a = json.loads(run("slr", "bayes", "--nu", "3", "--L", "4", "--presence", "1", "--json").stdout)
    b = json.loads(run("slr", "bayes", "--nu", "3", "--L", "4", "--json").stdout)
    assert a == b

def test_slr_population_heads_match_library():
    "population --presence/--heads: mh_optimal_risk (same draws); K = 1, p = 1, H = 1 gives today's answer."
    from attnstat.slr.multihead import MultiFeatureSLR, mh_optimal_risk
    data = json.loads(run("slr", "population", "--nu", "3", "--L", "4", "--presence", "0.5", "--activation", "sink",
                          "--n-mc", "1024", "--json").stdout)
    ref = mh_optimal_risk(MultiFeatureSLR(4, 3.0, 0.5), "sink", n=1024, n_eval=4096, seed=0)
    assert data["risk"] == ref.risk and data["sink"] == list(ref.sink) and data["heads"] == 1
    data = json.loads(run("slr", "population", "--nu", "2", "--L", "3", "--heads", "2", "--activation", "softmax",
                          "--n-mc", "512", "--seed", "3", "--json").stdout)
    ref = mh_optimal_risk(MultiFeatureSLR(3, 2.0), "softmax", H=2, n=512, n_eval=2048, seed=3)
    assert data["risk"] == ref.risk and data["heads"] == 2 and "sink" not in data
    a = json.loads(run("slr", "population", "--nu", "1", "--activation", "linear", "--presence", "1", "--heads", "1",
                       "--json").stdout)
    assert a == json.loads(run("slr", "population", "--nu", "1", "--activation", "linear", "--json").stdout)

def test_slr_dynamics_heads_match_library():
    "dynamics --heads/--features: mh_integrate from M = 0, C = q0 I (and mh_online_sgd with --D); K = H = 1 is today's."
    import numpy as np
    from attnstat.slr.multihead import MultiFeatureSLR, mh_integrate, mh_online_sgd
    data = json.loads(run("slr", "dynamics", "--nu", "2", "--heads", "2", "--features", "2", "--t-max", "1", "--eta", "0.5",
                          "--n-mc", "256", "--n-rep", "2", "--n-out", "3", "--D", "40", "--json").stdout)
    m = MultiFeatureSLR(2, (2.0, 2.0))
    ode = mh_integrate(m, "softmax", (np.zeros((4, 4)), 0.25 * np.eye(4), 0.0), 1.0, eta=0.5, n_mc=256, n_rep=2, n_out=3)
    np.testing.assert_array_equal(data["m_v_2_1"], ode.M[:, :, 3, 2].mean(axis=0))
    np.testing.assert_array_equal(data["risk"], ode.risk.mean(axis=0))
    sgd = mh_online_sgd(m, "softmax", 2, 40, 1.0, eta=0.5, n_seeds=2, n_out=3)
    np.testing.assert_array_equal(data["sgd_m_k_1_2"], sgd.M[:, :, 0, 1].mean(axis=0))
    args = ["slr", "dynamics", "--nu", "2", "--t-max", "1", "--n-mc", "512", "--n-out", "3", "--json"]
    a, b = (json.loads(run(*args, *extra).stdout) for extra in ([], ["--heads", "1", "--features", "1", "--presence", "1"]))
    assert a == b

@pytest.mark.parametrize("args, option", [
    (["slr", "bayes", "--nu", "3", "--presence", "0.5", "--alpha", "2"], "--alpha"),
    (["slr", "bayes", "--nu", "3", "--presence", "1.5"], "--presence"),
    (["slr", "bayes", "--nu", "3", "--nu", "2", "--presence", "0.5", "--presence", "0.5", "--presence", "0.5"], "--nu"),
    (["slr", "bayes", "--model", "max", "--nu", "3", "--presence", "0.5"], "--model spiked"),
    (["slr", "bayes", "--nu", "3,1", "--presence", "0.5"], "--nu"),
    (["slr", "replica", "--nu", "1", "--nu", "2", "--alpha", "1"], "--nu"),
    (["slr", "population", "--nu", "3", "--presence", "0.5", "--m-k", "1"], "--m-k"),
    (["slr", "population", "--nu", "1", "--seed", "2"], "--seed"),
    (["slr", "population", "--nu", "1", "--heads", "17"], "--heads"),
    (["slr", "dynamics", "--nu", "2", "--heads", "2", "--lam", "0.1"], "--lam"),
    (["slr", "dynamics", "--nu", "2", "--nu", "1", "--features", "3"], "--nu"),
])
def test_multifeature_refusals(args, option):
    res = run(*args)
    assert res.exit_code == 2, res.output
    assert option in one_line_error(res)

def test_replica_lam_optimal_matches_library():
    "slr replica --lam optimal: lambda* and its test error as optimal_lambda finds them (issue 32), text and --json."
    from attnstat.slr import SpikedSLR
    from attnstat.slr.tuning import optimal_lambda
    args = ["slr", "replica", "--nu", "2", "--alpha", "2", "--n-mc", "300", "--lam", "optimal", "--lam-bounds", "0.01", "10"]
    data = json.loads(run(*args, "--json").stdout)
    ref = optimal_lambda(SpikedSLR(2, 2.0), "softmax", 2.0, bounds=(0.01, 10.0), seed=0, options={"replica": {"n_mc": 300}})
    assert data["lam"] == [pytest.approx(ref.lam, rel=1e-12)]
    assert data["test_error"] == [pytest.approx(ref.test_error, rel=1e-12)]
    assert data["stop"] == [ref.stop] and data["lam_lo"][0] <= data["lam"][0] <= data["lam_hi"][0]
    assert "m_k" in data and "converged" in data                     # the replica solution at lambda*
    text = run(*args)
    assert text.exit_code == 0 and "lam" in text.output and "test_error" in text.output, text.output
    assert run("slr", "replica", "--help").output.count("optimal") >= 1

@pytest.mark.parametrize("args, words", [
    (["--lam", "optimal", "--lam-bounds", "1", "0.5"], ["--lam-bounds", "0 < LO < HI"]),
    (["--lam", "optimal", "--lam-bounds", "0", "1"], ["--lam-bounds", "0 < LO < HI"]),
    (["--lam", "optimal", "--lam-bounds", "-1", "1"], ["--lam-bounds", "0 < LO < HI"]),
    (["--lam", "optimal", "--lam-bounds", "1e-9", "1"], ["--lam-bounds", "[1e-08, 1e+06]"]),
    (["--lam", "optimal", "--lam-bounds", "1", "nan"], ["--lam-bounds"]),
    (["--lam", "optimal", "--lam-bounds", "1"], ["--lam-bounds"]),
    (["--lam", "best"], ["--lam", "'optimal'"]),
    (["--lam", "nan"], ["--lam", "nan"]),
    (["--lam-bounds", "0.1", "1"], ["--lam-bounds", "--lam optimal"]),
    (["--lam", "optimal", "--lam-k", "1"], ["--lam-k", "--lam optimal"]),
    (["--lam", "optimal", "--init", "uninformed"], ["--init", "--lam optimal"]),
])
def test_replica_lam_optimal_bad_input(args, words):
    "Bad --lam / --lam-bounds: one line naming the option, exit code 2, no traceback."
    res = run("slr", "replica", "--nu", "2", "--alpha", "2", "--n-mc", "300", *args)
    assert res.exit_code == 2, res.output
    line = one_line_error(res)
    assert all(w in line for w in words), line

def test_reproduce_notebooks_help_names_the_folder():
    "reproduce --notebooks: a folder holding the book's notebooks; the installed wheel carries a copy (issue 33)."
    out = " ".join(run("reproduce", "--help").output.split())
    assert "book's chapter notebooks" in out and "wheel carries" in out, out

# --- issue 31: --noise is a standard deviation; slr population at given overlaps with --presence -------------------

@pytest.mark.parametrize("sub", ["bayes", "population", "replica", "simulate", "amp", "bayes-branches", "dynamics"])
def test_noise_help_says_standard_deviation(sub):
    "--noise is the label noise's standard deviation Delta (the risk gains Delta^2), in every slr command's help."
    text = " ".join(run("slr", sub, "--help").output.split())
    assert "--noise" in text and "Standard deviation Delta >= 0 of the label noise" in text, text
    assert "Delta^2" in text and "Label noise Delta" not in text

def test_population_overlap_help_names_the_presence_rule():
    "The help of --m-k says what it does with --presence and that several heads or features refuse it."
    text = " ".join(run("slr", "population", "--help").output.split())
    assert "mh_population_risk" in text and "refused with several heads or features" in text, text

def test_population_presence_at_overlaps_matches_library():
    "slr population --presence P with the four overlaps: mh_population_risk with M = diag(m_k, m_v), Q = diag(q_k, q_v)."
    from attnstat.slr import MultiFeatureSLR, SpikedSLR, mh_population_risk, population_risk
    ov = ["--m-k", "0.9", "--q-k", "1.1", "--m-v", "0.4", "--q-v", "0.5"]
    for act, c in (("softmax", None), ("erf", 0.3)):
        extra = [] if c is None else ["--c", str(c)]
        data = json.loads(run("slr", "population", "--nu", "2", "--L", "3", "--noise", "0.3", "--presence", "0.5",
                              "--activation", act, *ov, *extra, "--n-mc", "4096", "--seed", "2", "--json").stdout)
        M, Q = [[0.9, 0.0], [0.0, 0.4]], [[1.1, 0.0], [0.0, 0.5]]
        r, err = mh_population_risk(MultiFeatureSLR(3, 2.0, 0.5, noise=0.3), act, M, Q, c=c or 0.0, n=4096, seed=2)
        assert data["risk"] == r and data["err"] == err and data["optimised"] is False and data["heads"] == 1
        assert data["excess"] == pytest.approx(r - 0.09, abs=1e-15)
        # the construction at presence 1 is one spiked-SLR head: population_risk within 3 standard errors
        r1, e1 = mh_population_risk(MultiFeatureSLR(3, 2.0, noise=0.3), act, M, Q, c=c or 0.0, n=2**14, seed=1)
        ref = population_risk(SpikedSLR(3, 2.0, noise=0.3), act, 0.9, 1.1, 0.4, 0.5, c=c or 0.0).risk
        assert abs(r1 - ref) < 3 * e1, (act, r1, e1, ref)

@pytest.mark.parametrize("extra, words", [
    (["--heads", "2"], "one head on one feature"), (["--nu", "1"], "one head on one feature"),
    (["--q-k", "0.5"], "--q-k"),
])
def test_population_presence_overlap_refusals(extra, words):
    "Overlaps with several heads or features, or q_k < m_k^2: one line, exit 2."
    ov = {"--m-k": "1", "--q-k": "1.5", "--m-v": "0.8", "--q-v": "0.9"}
    if "--q-k" in extra: ov["--q-k"] = "0.5"; extra = []
    args = [a for kv in ov.items() for a in kv]
    res = run("slr", "population", "--nu", "3", "--presence", "0.5", *args, *extra)
    assert res.exit_code == 2
    assert words in one_line_error(res)
