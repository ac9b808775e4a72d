"""Benchmarks of the SLR replica solver and the ERM simulation (plain script; prints timings and ratios).

1. One replica point (spiked L = 3, nu = 1, softmax, alpha = 5, lam = 0.1, 10^5 Monte Carlo samples) to an undamped
   residual below 1e-6 (target: under 20 s).
2. The prox at that point: the vectorised Newton solve against scipy.optimize.minimize (L-BFGS-B) over the
   concatenated batch, the naive approach, on the same fields and from the same start (target ratio > 20).
3. A 20-point alpha curve for one activation (informed start, continuation downward; target: under 5 minutes).
4. simulate_erm at D = 1000, alpha = 5, L = 3 (target: under 30 s).
"""
import sys, time
import numpy as np
from scipy.optimize import minimize
from attnstat.slr import SpikedSLR
from attnstat.slr.replica import replica_erm, replica_curve, channel_sample, prox_newton, prox_objective, _fields
from attnstat.slr.simulate import simulate_erm

def main(n_mc=100_000):
    model = SpikedSLR(3, 1.0)
    t0 = time.perf_counter()
    r = replica_erm(model, "softmax", 5.0, 0.1, n_mc=n_mc, atol=1e-6)
    t_point = time.perf_counter() - t0
    print(f"[1] replica point, n_mc={n_mc}: {t_point:.1f} s, {r.n_iter} iterations, undamped residual {r.residual:.1e}, "
          f"test error {r.test_error:.4f} ± {r.test_error_se:.4f}")

    S = channel_sample(model, n_mc, 0)
    omk, omv, _, _ = _fields(r.x, S)
    Vk, Vv = r.V_k, r.V_v
    t0 = time.perf_counter(); chi, phi, left = prox_newton("softmax", omk, omv, S.y, Vk, Vv, S.mask); t_newton = time.perf_counter() - t0
    def fg(x):
        p, g, _ = prox_objective("softmax", x.reshape(omk.shape), omk, omv, S.y, Vk, Vv, S.mask, derivatives=True)
        return p.sum(), g.ravel()
    t0 = time.perf_counter()
    res = minimize(fg, omk.ravel(), jac=True, method="L-BFGS-B", options=dict(gtol=1e-10, ftol=1e-15, maxiter=100_000))
    t_naive = time.perf_counter() - t0
    phi_naive = prox_objective("softmax", res.x.reshape(omk.shape), omk, omv, S.y, Vk, Vv, S.mask)
    print(f"[2] prox at n={n_mc}: Newton {t_newton:.2f} s, scipy L-BFGS-B on the concatenated batch {t_naive:.2f} s "
          f"({res.nit} iterations): ratio {t_naive / t_newton:.1f}x; max(phi_newton - phi_lbfgs) = {np.max(phi - phi_naive):.1e}, "
          f"samples where L-BFGS is lower by > 1e-8: {int(np.sum(phi - phi_naive > 1e-8))}")

    alphas = np.linspace(0.5, 20, 20)
    t0 = time.perf_counter()
    rows = replica_curve(model, "softmax", alphas, 0.1, starts=("informed",), directions=("down",), n_mc=20_000, atol=1e-5, progress=False)
    t_curve = time.perf_counter() - t0
    print(f"[3] 20-point alpha curve (n_mc=2e4, atol=1e-5): {t_curve:.0f} s, converged {sum(r['converged'] for r in rows)}/20")

    t0 = time.perf_counter()
    s = simulate_erm(model, "softmax", 5.0, 0.1, 1000, seed=0)
    print(f"[4] simulate_erm D=1000, alpha=5, L=3: {time.perf_counter() - t0:.1f} s total, L-BFGS {s.seconds:.1f} s, "
          f"{s.n_iter} iterations, test error {s.test_error:.4f}")

if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
