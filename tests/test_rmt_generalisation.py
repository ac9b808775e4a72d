"""The fresh-token test error (attnstat.rmt.generalisation) and the scale-invariant comparison (attnstat.rmt.sweeps);
the book's caches of these chapters (attnstat.book.rmt_vs_ridge, attnstat.book.rmt_generalisation) through the store.

Tolerances come from measured standard errors: the cached simulations (data/rmt_*.npz, 30-48 trials, p >= 512)
sit within 2.9 standard errors of the theory at every point and gamma (measured); we allow 3.5. The live small
simulation uses the Gaussian-equivalent kernel (no linearisation error) with 3 s.e. plus a stated allowance.
"""
import json, math
from pathlib import Path
import numpy as np
import pytest
from attnstat.gaussian import mean_stderr
from attnstat.rmt.theory import attention_error, ridge_error, spiked_rule, _problem, _noise_solution, _ybar
from attnstat.rmt.generalisation import (attention_test_theory, attention_test_error, ridge_test_error, simulate_test_errors,
                                         _forms, simulate_test_errors_cv)
from attnstat.rmt.sweeps import feature_scale, effective_dof, ridge_effective_dof, matched_dof_gamma, compare_attention_ridge
from attnstat.book.rmt_vs_ridge import load_points
from attnstat.book.rmt_generalisation import load_nonsymmetric_check, NONSYM_POINTS, NONSYM_GAMMAS
from attnstat.rmt.models import signal_plus_noise, attention_kernel

DATA = Path(__file__).resolve().parents[1] / "data"

def test_spectral_algebra_reproduces_ybar():
    # two routes to y^T Q y/n: the hand-derived Woodbury assembly and the generic spectral algebra
    for f, c, mu, wk, wq in (("tanh", 0.5, [1, 0], [0.6, 0.8], [1.2, -0.3]), ("relu", 2.0, [1.5, 0.3], [0.6, 0.8], [1.2, -0.3])):
        act, P = _problem(f, c, mu, wk, wq, 0.0, None, True)
        g = (1e-3, 0.3); _, X, _ = _noise_solution(P.c, P.a1, P.s2, P.d, g, P.rule.nodes.size, 1e-12, 0.3, 20000)
        for x, gi in zip(X, g):
            assert abs(_forms(x.astype(complex), gi, P)[0].real / _ybar(x, gi, P) - 1) < 1e-9

def test_ridge_test_error_closed_form():
    # against an independent quadrature of beta^T mu and |beta|^2 over nu_s, and the gamma -> infinity limit
    for c, snr, g in ((0.5, 1.0, 0.1), (2.0, 3.0, 1e-3), (0.25, 0.2, 1.0)):
        J = spiked_rule(c, snr)
        bm, b2 = snr * J.integrate(lambda l: 1 / (l + g)), (snr + c) * J.integrate(lambda l: 1 / (l + g)**2)
        assert abs(ridge_test_error(c=c, gamma=g, snr=snr) - ((1 - bm)**2 + b2)) < 1e-8
    assert abs(ridge_test_error(c=0.5, gamma=1e12, snr=1.0) - 1) < 1e-10
    assert abs(attention_test_error("tanh", c=0.5, gamma=1e12, mu=[1.0], w_K=[0.0], w_Q=[0.0]) - 1) < 1e-10

def test_a1_zero_carries_no_signal():
    a = attention_test_theory("cos", c=0.5, gamma=[1e-2, 1.0], mu=[2.0, 0], w_K=[1.0, 0], w_Q=[1.0, 0], require_a1=False)
    b = attention_test_theory("cos", c=0.5, gamma=[1e-2, 1.0], mu=[0.0, 0], w_K=[0.0, 0], w_Q=[0.0, 0], require_a1=False)
    assert np.allclose(a.u_mu, 0, atol=1e-12) and np.allclose(a.error, b.error, rtol=1e-10)
    assert np.all(a.error > 1)          # the readout adds noise and no signal: worse than predicting 0

def test_theory_vs_cached_simulation():
    z = np.load(DATA / "rmt_test_error.npz"); pts = json.loads(str(z["points"])); g = z["gamma"]
    worst = 0.0
    for k, pt in enumerate(pts):
        th = attention_test_theory(pt["f"], c=pt["p"] / pt["n"], gamma=g, mu=pt["mu"], w_K=pt["w_K"], w_Q=pt["w_Q"])
        for nm, T in (("attention", th.error), ("ridge", th.ridge), ("attention_train", th.train), ("ridge_train", th.ridge_train)):
            m, s = mean_stderr(z[f"{nm}_{k}"], axis=0)
            worst = max(worst, float(np.max(np.abs(m - T) / s)))
            assert np.all(np.abs(m - T) <= 3.5 * s), (pt["label"], nm, m, T, s)
    assert worst > 0.5                    # the comparison is not vacuous (measured worst: 2.9 s.e.)

def test_theory_vs_live_gaussian_equivalent():
    # p = 256, n = 512, 8 contexts x 500 fresh tokens, Gaussian-equivalent kernel: 3 s.e. plus 0.01 for O(1/sqrt(n))
    g = np.array([0.03, 1.0])
    e = simulate_test_errors("tanh", 512, 256, [1.0, 0.0], [0.6, 0.8], [1.0, 0.3], g, 8, 5, n_test=500, kernel="gaussian")
    th = attention_test_theory("tanh", c=0.5, gamma=g, mu=[1.0, 0.0], w_K=[0.6, 0.8], w_Q=[1.0, 0.3])
    for which, T in (("attention", th.error), ("ridge", th.ridge)):
        m, s = e.stats(which)
        assert np.all(np.abs(m - T) <= 3 * s + 0.01), (which, m, s, T)

def test_feature_scale_and_dof_against_simulation():
    # mean eigenvalue tr(Phi^T Phi)/n^2 and dof = tr(A (A + gamma)^-1)/n of the real tanh kernel, p = 512, n = 1024, one
    # draw (relative fluctuations ~1e-3); allowance 2% for the O(p^-1/2) linearisation effects
    X, _ = signal_plus_noise(1024, 512, [1.0], seed=3)
    Phi = X @ attention_kernel(X, "tanh"); lam = np.linalg.eigvalsh(Phi @ Phi.T / 1024)
    assert abs(lam.sum() / 1024 / feature_scale("tanh", c=0.5) - 1) < 0.02
    for g in (0.01, 1.0):
        assert abs(np.sum(lam / (lam + g)) / 1024 - effective_dof("tanh", c=0.5, gamma=g)) < 0.01
    lamX = np.linalg.eigvalsh(X @ X.T / 1024)
    assert abs(np.sum(lamX / (lamX + 0.1)) / 1024 - ridge_effective_dof(c=0.5, gamma=0.1)) < 0.01
    # tau^2 + c E[x m0(x)^2] equals the large-gamma expansion tr Q/n = 1/g - tau/g^2 + O(g^-3) (Richardson)
    from attnstat.rmt import noise_fixed_point
    t = [g * g * (1 / g - noise_fixed_point("tanh", c=0.5, gamma=[g]).trace[0]) for g in (1e4, 2e4)]
    assert abs(2 * t[1] - t[0] - feature_scale("tanh", c=0.5)) < 3e-6      # O(1/g^2): 8.5e-5 at 1e3, 8.7e-7 at 1e4

def test_compare_scales():
    kw = dict(c=0.25, gamma=[0.1, 1.0], mu=[1.0, 0.0], w_K=[1.0, 0.0], w_Q=[1.0, 0.0])
    raw = compare_attention_ridge("tanh", scale="raw", **kw)
    assert np.allclose(raw["E_attn"], attention_error("tanh", **kw)) and np.allclose(raw["E_rr"], ridge_error(c=0.25, gamma=[0.1, 1.0], snr=1.0))
    rel = compare_attention_ridge("tanh", scale="relative", **kw)
    assert np.allclose(rel["gamma_attn"] / rel["gamma_rr"], feature_scale("tanh", c=0.25) / 0.25)
    dof = compare_attention_ridge("tanh", scale="dof", test=True, **kw)
    assert np.allclose(dof["dof_attn"], dof["dof_rr"], rtol=1e-8) and "E_test_attn" in dof
    assert matched_dof_gamma("tanh", c=0.5, dof=0.3) > 0
    with pytest.raises(ValueError, match="scale"): compare_attention_ridge("tanh", scale="bogus", **kw)
    with pytest.raises(ValueError, match="dof"): matched_dof_gamma("tanh", c=0.5, dof=0.7)

def test_scale_spot_checks_cached():
    # tanh at p = 1024, 40 draws: attention and ridge at every gamma of each point within 3 s.e. (measured max 2.6)
    for pt in load_points(DATA / "rmt_scale_check.npz"):
        g = np.array(pt["gammas"]); c = pt["p"] / pt["n"]
        mA, sA = mean_stderr(pt["attention"], axis=0); mR, sR = mean_stderr(pt["ridge"], axis=0)
        assert np.all(np.abs(mA - attention_error("tanh", c=c, gamma=g, mu=pt["mu"], w_K=pt["w_K"], w_Q=pt["w_Q"])) <= 3 * sA)
        assert np.all(np.abs(mR - ridge_error(c=c, gamma=g, snr=pt["snr"])) <= 3 * sR)

def test_bad_input():
    kw = dict(c=0.5, gamma=0.1, mu=[1.0], w_K=[0.0], w_Q=[0.0])
    with pytest.raises(TypeError, match="gamma"): attention_test_error("tanh", **{**kw, "gamma": "0.1"})
    with pytest.raises(ValueError, match="mu must not be empty"): attention_test_error("tanh", **{**kw, "mu": [], "w_K": [], "w_Q": []})
    with pytest.raises(TypeError, match="snr"): ridge_test_error(c=0.5, gamma=0.1, snr=None)
    with pytest.raises(ValueError, match="n, p, n_test is too large"):
        simulate_test_errors("tanh", 10**6, 10**6, [1.0], [0.0], [0.0], [0.1], 2, 0)

def test_extremes_never_silently_wrong():
    # large SNR / weights and tiny gamma make the assembly cancel terms of order SNR or 1/gamma; the result is either
    # finite, non-negative and smooth in gamma, or a ConvergenceError that says so (never a negative or NaN value)
    from attnstat.core import ConvergenceError
    rng = np.random.default_rng(2)
    for k in range(12):
        f = ("tanh", "relu", "sign", "linear")[k % 4]
        c, g, s = 10 ** rng.uniform(-2, 2), 10 ** rng.uniform(-10, 4), 10 ** rng.uniform(-2, 6)
        w = rng.standard_normal(2) * 10 ** rng.uniform(-1, 2)
        try: e = attention_test_error(f, c=c, gamma=g, mu=[s ** 0.5, 0.0], w_K=w, w_Q=w)
        except ConvergenceError as ex: assert "loses precision" in str(ex) or "non-finite" in str(ex)
        else: assert np.isfinite(e) and e >= 0, (f, c, g, s, w, e)
    assert np.isfinite(ridge_test_error(c=0.5, gamma=1e-300, snr=1e200))


def _nonsym_theory(k, gamma=NONSYM_GAMMAS):
    pt = NONSYM_POINTS[k]
    return attention_test_theory(pt["f"], c=pt["c"], gamma=gamma, mu=pt["mu"], w_K=pt["w_K"], w_Q=pt["w_Q"])

def _nonsym_gap(d, th, k, p, nm):
    "Simulated minus limiting error and its standard error per gamma (point k, size p, quantity nm)."
    m, s = mean_stderr(d[(k, p)][nm], axis=0)
    return m - getattr(th, dict(attention="error", attention_train="train", ridge="ridge", ridge_train="ridge_train")[nm]), s

def test_nonsymmetric_point_at_p2048():
    """Issue 18 (5): the non-symmetric point (tanh, w_K = (0.6, 0.8), w_Q = (1.2, -0.3), SNR 1, c = 1/2), real kernel,
    control-variate estimator (data/rmt_nonsym_check.npz), at p = 2048 (n = 4096) with 192 contexts: standard errors
    of the test error at most 1e-3 at gamma = 0.1 and 1 (measured 0.0032, 0.0009, 0.0003 at gamma = 0.01, 0.1, 1);
    the test error within 0.004 of its limit at gamma >= 0.1, half the gap of 0.008 that the independent check
    reported at p <= 1024 (measured -0.0022 and -0.0012: a finite-size gap that the fit below accounts for); the
    interpolation error and the exact ridge errors within 3.5 s.e. of theirs (measured: at most 2.4); and the
    simulation far from the theory of the exchanged orientation (measured: at least 45 s.e.), so the test sees the
    orientation of W. The exchanged point at p = 1024 (32 contexts) lies within 3.5 s.e. of its own theory
    (measured: at most 2.6)."""
    d = load_nonsymmetric_check(DATA / "rmt_nonsym_check.npz")
    th = {k: _nonsym_theory(k) for k in (0, 1)}
    assert len(d[(0, 2048)]["attention"]) >= 192
    gap, s = _nonsym_gap(d, th[0], 0, 2048, "attention")
    assert np.all(s[1:] <= 1e-3) and s[0] <= 4e-3, s
    assert np.all(np.abs(gap[1:]) <= 0.004), (gap, s)
    for nm in ("attention_train", "ridge", "ridge_train"):
        g_, s_ = _nonsym_gap(d, th[0], 0, 2048, nm)
        assert np.all(np.abs(g_) <= 3.5 * s_), (nm, g_, s_)
    m = gap + th[0].error
    assert np.all(np.abs(m - th[1].error) > 8 * s), (m, th[1].error, s)
    for nm in ("attention", "attention_train", "ridge", "ridge_train"):
        g_, s_ = _nonsym_gap(d, th[1], 1, 1024, nm)
        assert np.all(np.abs(g_) <= 3.5 * s_), (nm, g_, s_)

def test_nonsymmetric_finite_size_extrapolation():
    """The gap between simulation and theory at the non-symmetric point over p = 512, 1024, 2048 (384, 192, 192
    contexts), fitted by weighted least squares as b + a/p per gamma: the extrapolated gap b of the test and of the
    interpolation error is within 3 of its standard errors of zero (measured: at most 1.9) and the fit is acceptable
    (chi^2 with 1 degree of freedom below 9; measured: at most 2.3)."""
    d = load_nonsymmetric_check(DATA / "rmt_nonsym_check.npz"); th = _nonsym_theory(0)
    ps = sorted(p for k, p in d if k == 0); assert ps[:3] == [512, 1024, 2048], ps
    x = 1 / np.array(ps, float); X = np.column_stack([np.ones_like(x), x])
    for nm in ("attention", "attention_train"):
        G, S = (np.array(a) for a in zip(*(_nonsym_gap(d, th, 0, p, nm) for p in ps)))   # (len(ps), 3) each
        for j in range(3):
            w = 1 / S[:, j]; Xw = X * w[:, None]
            beta, *_ = np.linalg.lstsq(Xw, G[:, j] * w, rcond=None)
            se_b = np.sqrt(np.linalg.inv(Xw.T @ Xw)[0, 0]); chi2 = (((G[:, j] - X @ beta) * w)**2).sum()
            assert abs(beta[0]) <= 3 * se_b and chi2 < 9, (nm, j, beta, se_b, chi2)

def test_nonsymmetric_points_live_small_p():
    """Both non-symmetric points live at p = 256, n = 512 (12 contexts, 1000 fresh tokens, real kernel): test and
    interpolation errors within 3 s.e. plus an allowance of 0.03 for the finite size (measured gaps at p = 256: up to
    0.025 on the test error at gamma = 0.1, shrinking to 0.006 at p = 512 and 0.0016 at p = 1024), and each closer to
    its own theory than to the exchanged orientation's."""
    g = np.array([0.1, 1.0]); th = {k: _nonsym_theory(k, g) for k in (0, 1)}
    for k, pt in enumerate(NONSYM_POINTS):
        e = simulate_test_errors_cv(pt["f"], 512, 256, pt["mu"], pt["w_K"], pt["w_Q"], g, 12, 7 + k, n_test=1000)
        for nm, T in (("attention", th[k].error), ("attention_train", th[k].train)):
            m, s = e.stats(nm)
            assert np.all(np.abs(m - T) <= 3 * s + 0.03), (k, nm, m, T, s)
        m, _ = e.stats("attention")
        assert np.all(np.abs(m - th[k].error) < np.abs(m - th[1 - k].error)), (k, m, th[k].error, th[1 - k].error)


# --- the book's caches through the store (issue 29): keyed by every parameter, concurrent writers, damaged exports ---
from attnstat.store import CacheError, open_store
import attnstat.book.rmt_vs_ridge as BV
import attnstat.book.rmt_generalisation as BG

TINY = dict(point=0, p=8, trials=2, n_test=4)   # n = 16: milliseconds per chunk

def _chunk_direct(point, p, trials, chunk, seed, n_test):
    "The chunk simulated directly, with the seed rule of the cache (SeedSequence([seed, point, p, chunk]))."
    pt = NONSYM_POINTS[point]
    rng = np.random.default_rng(np.random.SeedSequence([seed, point, p, chunk]))
    return simulate_test_errors_cv(pt["f"], round(p / pt["c"]), p, pt["mu"], pt["w_K"], pt["w_Q"], NONSYM_GAMMAS,
                                   trials, rng, n_test=n_test)

def test_nonsymmetric_cache_is_keyed_by_every_parameter(tmp_path):
    "A chunk asked for with another seed, trials or n_test is recomputed, never the stored one returned."
    path = tmp_path / "ns.npz"
    a = BG.run_nonsymmetric_check(path, seed=1, **TINY)
    assert np.array_equal(a["attention"], _chunk_direct(0, 8, 2, 0, 1, 4).attention)
    b = BG.run_nonsymmetric_check(path, seed=1, **TINY)                         # a hit: the same numbers
    assert all(np.array_equal(a[k], b[k]) for k in ("attention", "ridge", "attention_train", "ridge_train"))
    assert len(open_store(tmp_path / "attnstat.sqlite").entries("ns")) == 1
    for change in ({"seed": 2}, {"trials": 3}, {"n_test": 5}):
        kw = {**TINY, "seed": 1, **change}
        c = BG.run_nonsymmetric_check(path, **kw)
        want = _chunk_direct(kw["point"], kw["p"], kw["trials"], 0, kw["seed"], kw["n_test"])
        assert np.array_equal(c["attention"], want.attention) and np.array_equal(c["ridge_train"], want.ridge_train)
        assert len(c["attention"]) == kw["trials"]   # more contexts: the first ones share their seeds, the rest are new
        if "trials" not in change: assert not np.array_equal(c["attention"], a["attention"]), change
        d = load_nonsymmetric_check(path)[(0, 8)]                                  # the export: this run's chunk only
        assert np.array_equal(d["attention"], want.attention) and len(d["chunks"]) == 1, change
    # the same chunk with more contexts replaces the run's old entry (it shares its seed); other runs are kept
    BG.run_nonsymmetric_check(path, seed=1, **{**TINY, "trials": 4})
    runs = [(e["seed"], e["params"]["trials"], e["params"]["n_test"]) for e in open_store(tmp_path / "attnstat.sqlite").entries("ns")]
    assert sorted(runs) == [(1, 2, 5), (1, 4, 4), (2, 2, 4)], runs

def test_panel_and_points_caches_are_keyed_by_every_parameter(tmp_path, monkeypatch):
    "run_panel and simulate_points: a hit returns the stored numbers, a changed seed or trials recomputes them."
    pts = [BV._pt("tanh", None, 16, 8, [1.0, 0.0], [0.0, 0.0], [0.0, 0.0], x=0.0),
           BV._pt("tanh", None, 16, 24, [1.0, 0.0], [1.0, 0.0], [1.0, 0.0], x=1.0)]
    monkeypatch.setitem(BV.PANELS, "tiny", lambda: (pts, np.array([0.1, 1.0]), 2))
    path = tmp_path / "rmt_sim_tiny.npz"
    a = BV.run_panel("tiny", path=path)
    from attnstat.core import spawn
    from attnstat.rmt.models import empirical_errors
    rng = spawn(2026, 2)[1]
    want = empirical_errors("tanh", 16, 24, [1.0, 0.0], [1.0, 0.0], [1.0, 0.0], np.array([0.1, 1.0]), 2, rng)
    assert np.array_equal(a["attention"][1], want.attention) and np.array_equal(a["ridge"][1], want.ridge)
    d = BV.load_panel(path)
    assert np.array_equal(d["attention"], a["attention"]) and d["points"] == pts and d["trials"] == 2
    assert np.array_equal(BV.run_panel("tiny", path=path)["attention"], a["attention"])
    assert not np.array_equal(BV.run_panel("tiny", path=path, seed=7)["attention"], a["attention"])
    assert BV.run_panel("tiny", path=path, trials=3)["attention"].shape == (2, 3, 2)
    assert len(open_store(tmp_path / "attnstat.sqlite").entries("rmt_sim_tiny")) == 6
    sp = [{**pts[0], "gammas": [0.1, 1.0]}]
    p1 = BV.simulate_points(sp, tmp_path / "pts.npz", trials=2, seed=3)
    rng = np.random.default_rng(np.random.SeedSequence(3).spawn(1)[0])
    assert np.array_equal(p1["attention_0"], empirical_errors("tanh", 16, 8, [1.0, 0.0], [0.0, 0.0], [0.0, 0.0],
                                                              np.array([0.1, 1.0]), 2, rng).attention)
    assert np.array_equal(BV.simulate_points(sp, tmp_path / "pts.npz", trials=2, seed=3)["attention_0"], p1["attention_0"])
    p2 = BV.simulate_points(sp, tmp_path / "pts.npz", trials=2, seed=4)
    assert not np.array_equal(p2["attention_0"], p1["attention_0"])
    assert np.array_equal(BV.load_points(tmp_path / "pts.npz")[0]["attention"], p2["attention_0"])

def _add_chunks(path, chunks, barrier):
    barrier.wait()
    for c in chunks: BG.run_nonsymmetric_check(path, chunk=c, seed=5, **TINY)

def test_concurrent_chunk_writers_lose_nothing(tmp_path):
    "Two processes adding chunks to one export at the same time: every chunk is in the store and in the export."
    import multiprocessing as mp
    ctx = mp.get_context("fork"); barrier = ctx.Barrier(2); path = tmp_path / "ns.npz"
    # the store made first: two processes creating a new store at the same instant is the store's own race
    # (attnstat.store; an open may fail with "busy"), not what this test is about
    with open_store(tmp_path / "attnstat.sqlite") as st: st.tables()
    procs = [ctx.Process(target=_add_chunks, args=(path, chunks, barrier)) for chunks in (range(0, 6), range(6, 12))]
    for p in procs: p.start()
    for p in procs: p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    d = load_nonsymmetric_check(path)[(0, 8)]
    assert sorted(c["chunk"] for c in d["chunks"]) == list(range(12)) and len(d["attention"]) == 24
    assert len(open_store(tmp_path / "attnstat.sqlite").entries("ns")) == 12
    for k in (0, 7, 11):   # row by row: each chunk holds its own numbers, nothing mixed
        i = [c["chunk"] for c in d["chunks"]].index(k)   # the export's order (its keys, sorted as text)
        assert np.array_equal(d["attention"][2 * i:2 * i + 2], _chunk_direct(0, 8, 2, k, 5, 4).attention)

def test_damaged_export_is_a_cache_error(tmp_path):
    "A truncated NPZ (what a kill during a plain write leaves) raises CacheError saying how to start afresh."
    path = tmp_path / "ns.npz"
    BG.run_nonsymmetric_check(path, seed=1, **TINY)
    good = path.read_bytes()
    for cut in (len(good) // 2, 30, 0):
        path.write_bytes(good[:cut])
        for load in (load_nonsymmetric_check, BV.load_panel, BV.load_points, BV.read_npz):
            with pytest.raises(CacheError, match="start afresh") as e: load(path)
            assert "fresh=True" in str(e.value) and "BadZipFile" not in type(e.value).__name__
    path.write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(CacheError, match="start afresh"): BV.read_npz(path)
    BG.run_nonsymmetric_check(path, seed=1, **TINY)                    # the runner rewrites it from the store
    assert np.array_equal(load_nonsymmetric_check(path)[(0, 8)]["attention"], _chunk_direct(0, 8, 2, 0, 1, 4).attention)
    with pytest.raises(FileNotFoundError, match="path"): BV.read_npz(tmp_path / "missing.npz")
    with pytest.raises(TypeError, match="fresh"): BG.run_nonsymmetric_check(path, seed=1, fresh=1, **TINY)

@pytest.mark.parametrize("cv", [False, True])
def test_run_time_guard_within_3x_of_measured(cv):
    # issue 33: the run-time guard of simulate_test_errors(_cv) is trials * _test_trial_seconds(...), a cost model
    # fitted to time.process_time at nine sizes (0.77-1.13 there); on a small run here it must stay within [1/3, 3]
    # of the measured CPU time (median of 3 runs, one BLAS thread, so the ratio does not move with the load).
    import time
    from threadpoolctl import threadpool_limits
    from attnstat.rmt.generalisation import _test_trial_seconds
    fn = simulate_test_errors_cv if cv else simulate_test_errors
    g = [0.1, 1.0, 10.0]
    ratios = []
    with threadpool_limits(1):
        for n, p, n_test, trials in ((512, 256, 1000, 4), (256, 512, 500, 4)):
            fn("tanh", n, p, [1.0, 0.0], [0.6, 0.8], [1.2, -0.3], g, 2, 0, n_test=n_test)   # warm up
            ts = []
            for rep in range(3):
                t0 = time.process_time()
                fn("tanh", n, p, [1.0, 0.0], [0.6, 0.8], [1.2, -0.3], g, trials, rep, n_test=n_test)
                ts.append(time.process_time() - t0)
            est = trials * _test_trial_seconds(n, p, n_test, len(g), cv=cv)
            ratios.append(est / float(np.median(ts)))
    assert all(1 / 3 <= r <= 3 for r in ratios), ratios
