"""Benchmarks of the SLR replica solver (plain script; prints timings and ratios against the former implementation,
which stays reachable as `integration="mc", n_rand=1`).

1. Precision at spiked L = 2, nu = 2, alpha = 5, lam = 0.1, softmax: the spread (standard deviation over 8 seeds of
   the channel sample) of the test error and the time per point, former plain Monte Carlo (n = 2e4) against the
   default (randomised QMC on the conditioned spiked sample, 4 Sobol nets of 2^14 points, multi-start Newton prox;
   target: spread <= 2e-4 in <= 3 s per point). Also prints the reported `test_error_se` (the spread of the 4 nets
   over sqrt(4)) next to the measured spread, and the CPU time per point (the wall time depends on the load).
2. A 50-point alpha curve (spiked L = 3, nu = 1, softmax, lam = 0.1) with the stability diagnostics, on 2 cores
   (the grid cut in two pieces, each scanned downward with warm starts; target: under 60 s).
   `--baseline` also times the former 20-point curve (plain MC, n = 2e4, one core).
3. The prox at one point: the vectorised Newton solve against scipy L-BFGS-B on the concatenated batch.

Sections can be chosen by name: `python benchmarks/bench_slr_replica.py precision curve prox`.
"""
import sys, time
import numpy as np
from scipy.optimize import minimize
from attnstat.slr import SpikedSLR
from attnstat.slr.replica import replica_erm, replica_curve, channel_sample, prox_newton, prox_objective, _fields

def precision(seeds=range(8), **new):
    m = SpikedSLR(2, 2.0)
    out = {}
    for name, kw in (("former MC, n=2e4", dict(integration="mc", n_rand=1, n_mc=20_000)), ("default (RQMC, conditioned)", new)):
        te, se, ts, cs = [], [], [], []
        for s in seeds:
            t0, c0 = time.perf_counter(), time.process_time()
            r = replica_erm(m, "softmax", 5.0, 0.1, mc_seed=s, **kw)
            ts.append(time.perf_counter() - t0); cs.append(time.process_time() - c0)
            te.append(r.test_error); se.append(r.test_error_se)
        out[name] = (np.std(te, ddof=1), np.mean(ts), np.sqrt(np.mean(np.square(se))), np.mean(te), np.mean(cs))
        print(f"[1] {name}: test error {np.mean(te):.5f}, spread over {len(te)} seeds {out[name][0]:.2e}, "
              f"reported s.e. (rms) {out[name][2]:.2e}, {out[name][1]:.2f} s per point (CPU {out[name][4]:.2f} s)", flush=True)
    (s0, t0, _, _, c0), (s1, t1, _, _, c1) = out.values()
    print(f"[1] ratio: spread {s0 / s1:.1f}x smaller, time {t1 / t0:.2f}x (CPU {c1 / c0:.2f}x)")

def curve(n_points=50, **new):
    new = dict(dict(n_mc=8192, atol=1e-5, max_iter=150), **new)
    alphas = np.geomspace(0.3, 20, n_points)
    t0 = time.perf_counter()
    rows = replica_curve(SpikedSLR(3, 1.0), "softmax", alphas, 0.1, starts=("informed",), directions=("down",),
                         n_jobs=2, split=2, progress=False, **new)
    t = time.perf_counter() - t0
    print(f"[2] {n_points}-point curve with stability diagnostics on 2 cores: {t:.1f} s, converged "
          f"{sum(r['converged'] for r in rows)}/{len(rows)}, RS-unstable {sum(not r.get('rs_stable', True) for r in rows)}", flush=True)
    return t

def baseline_curve():
    t0 = time.perf_counter()
    rows = replica_curve(SpikedSLR(3, 1.0), "softmax", np.linspace(0.5, 20, 20), 0.1, starts=("informed",), directions=("down",),
                         n_mc=20_000, integration="mc", n_rand=1, diagnostics=False, atol=1e-5, progress=False)
    t = time.perf_counter() - t0
    print(f"[2] former 20-point curve (plain MC, n=2e4, no diagnostics, one core): {t:.1f} s ({t / 20:.2f} s per point)")
    return t

def prox(n_mc=100_000):
    model = SpikedSLR(3, 1.0)
    r = replica_erm(model, "softmax", 5.0, 0.1, n_mc=20_000, integration="mc", n_rand=1, atol=1e-5)
    S = channel_sample(model, n_mc, 0)
    omk, omv, _, _ = _fields(r.x, S)
    t0 = time.perf_counter(); chi, phi, left = prox_newton("softmax", omk, omv, S.y, r.V_k, r.V_v, S.mask); t_newton = time.perf_counter() - t0
    def fg(x):
        p, g, _ = prox_objective("softmax", x.reshape(omk.shape), omk, omv, S.y, r.V_k, r.V_v, S.mask, derivatives=True)
        return p.sum(), g.ravel()
    t0 = time.perf_counter()
    res = minimize(fg, omk.ravel(), jac=True, method="L-BFGS-B", options=dict(gtol=1e-10, ftol=1e-15, maxiter=100_000))
    t_naive = time.perf_counter() - t0
    phi_naive = prox_objective("softmax", res.x.reshape(omk.shape), omk, omv, S.y, r.V_k, r.V_v, S.mask)
    print(f"[3] prox at n={n_mc}: Newton {t_newton:.2f} s, scipy L-BFGS-B {t_naive:.2f} s: ratio {t_naive / t_newton:.1f}x; "
          f"max(phi_newton - phi_lbfgs) = {np.max(phi - phi_naive):.1e}")

if __name__ == "__main__":
    sections = [a for a in sys.argv[1:] if not a.startswith("--")] or ["precision", "curve", "prox"]   # e.g. `precision`
    if "precision" in sections: precision()
    if "curve" in sections:
        t = curve()
        if "--baseline" in sys.argv:
            tb = baseline_curve()
            print(f"[2] ratio per point (former / new with diagnostics): {(tb / 20) / (t / 50):.1f}x")
    if "prox" in sections: prox()
