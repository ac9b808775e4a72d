"""Benchmark of the SLR learning dynamics (plain script; prints timings and speed ratios).

1. One gradient-flow ODE trajectory (softmax, spiked L = 3, nu = 2) to t = 40 at a Monte Carlo accuracy of about 0.01
   in the overlaps (target <= 2 s on one core), against the D = 4000 online-SGD simulation it replaces at the same
   accuracy: SGD is timed over a short stretch of time with 2 batched seeds and extrapolated (its cost is linear in t),
   and the number of seeds needed for a standard error of 0.01 comes from the seed-to-seed spread of the cached
   D = 4000 runs (data/slr_dyn_sgd.npz, t = 16) when present, else from the measured stretch.
2. The stability spectrum at one point (softmax at the Bayes point; target <= 5 s), against the same Hessian by plain
   Monte Carlo draws (no Sobol net) at the same accuracy.

Run: .venv/bin/python benchmarks/bench_slr_dynamics.py [--quick]   (--quick: t = 4, D = 500, seconds)
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import math, time
from pathlib import Path
import numpy as np
from attnstat.slr.models import SpikedSLR
from attnstat.slr.dynamics import integrate, online_sgd, stability_spectrum, dyn_draws, risk_grad
from _bench import QUICK, ratio, load

print(f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, {load()}")
mdl = SpikedSLR(3, 2.0)
T = 4.0 if QUICK else 40.0
D = 500 if QUICK else 4000
n_mc = 2**10 if QUICK else 2**12

# 1. ODE vs online SGD
runs = []
for n in ((2**10,) if QUICK else (2**12, 2**14)):
    c0 = time.process_time(); t0 = time.perf_counter()
    tr = integrate(mdl, "softmax", T, eta=1.0, n_mc=n, n_rep=4, dt=0.2, n_out=21)   # 4 replicates: a 2-replicate error has 1 degree of freedom
    t_ode, c_ode = time.perf_counter() - t0, time.process_time() - c0
    acc = float(np.nanmax(tr.err[:, [0, 3, 4, 6]]))
    worst = ["m_k", "m_v", "q_k", "q_v"][int(np.nanargmax(np.nanmax(tr.err[:, [0, 3, 4, 6]], axis=0)))]
    acc_mk = float(np.nanmax(tr.err[:, 0]))
    runs.append((n, t_ode, c_ode, acc, acc_mk))
    print(f"[1] SGD-limit ODE (softmax, eta = 1) to t = {T:g}, 4 x {2 * n} symmetrised Sobol sequences: {t_ode:.2f} s wall, "
          f"{c_ode:.2f} s CPU (target <= 2 s at t = 40), {tr.n_steps} Heun steps; Monte Carlo accuracy (standard error over the 4 replicates, "
          f"3 degrees of freedom, 95% interval x{tr.ci('m_k')[-1] / tr.err_of('m_k')[-1]:.2f}; max over t) {acc:.4f} in {worst}, {acc_mk:.4f} in m_k")
n, t_ode, c_ode, acc, acc_mk = runs[0]
t_stretch = 0.25 if QUICK else 1.0
c0 = time.process_time(); s = online_sgd(mdl, "softmax", D, t_stretch, eta=1.0, n_seeds=2, seed=0, n_out=3)
c_sgd_seed = (time.process_time() - c0) / 2 * (T / t_stretch)          # CPU of one seed, extrapolated to t = T
cache = Path(__file__).resolve().parents[1] / "data" / "slr_dyn_sgd.npz"
Dc = None
if cache.exists() and not QUICK:
    Z = np.load(cache)
    dims = sorted(int(k.split("_D")[1].split("_")[0]) for k in Z.files if k.startswith("softmax_D") and k.endswith("_sim"))
    if dims: Dc = dims[-1]
if Dc is not None:
    sim = Z[f"softmax_D{Dc}_sim"]
    spread = float(np.max(np.std(sim[:, :, [0, 3, 4, 6]], axis=0, ddof=1))) * math.sqrt(Dc / D)   # fluctuations ~ D^(-1/2)
    spread_mk = float(np.max(np.std(sim[:, :, 0], axis=0, ddof=1))) * math.sqrt(Dc / D)
    src = f"the cached D = {Dc} runs to t = 10 (max over t of the seed-to-seed standard deviation, scaled by (D_cached/D)^(1/2))"
else:
    spread = float(np.max(np.std(s.overlaps[:, -1, [0, 3, 4, 6]], axis=0, ddof=1))); src = f"this stretch (D = {D}, 2 seeds)"
    spread_mk = float(np.max(np.std(s.overlaps[:, -1, 0], axis=0, ddof=1)))
seeds = max(1, math.ceil((spread / acc)**2))
c_sgd = seeds * c_sgd_seed
print(f"[1] online SGD, D = {D}, eta = 1: {c_sgd_seed:.1f} s CPU per seed to t = {T:g} (measured on t <= {t_stretch:g}); "
      f"seed spread {spread:.3f} from {src}: {seeds} seed(s) for the ODE's accuracy {acc:.3f}, {c_sgd:.1f} s CPU")
ratio(f"online SGD (D = {D}, same accuracy {acc:.3f} in all overlaps) / SGD-limit ODE, t = {T:g}, CPU time", c_sgd / c_ode,
      "target: the ODE at accuracy 0.01 in <= 2 s at t = 40")
seeds_mk = max(1, math.ceil((spread_mk / acc_mk)**2))
print(f"[1] in m_k alone: ODE accuracy {acc_mk:.4f} in {c_ode:.2f} s CPU; SGD seed spread {spread_mk:.3f}: {seeds_mk} seed(s), "
      f"{seeds_mk * c_sgd_seed:.1f} s CPU")
ratio(f"online SGD (D = {D}, same accuracy {acc_mk:.3f} in m_k) / SGD-limit ODE, t = {T:g}, CPU time", seeds_mk * c_sgd_seed / c_ode,
      "target: the ODE at accuracy 0.01 in <= 2 s at t = 40")

# 2. stability spectrum
c0 = time.process_time(); t0 = time.perf_counter()
sp = stability_spectrum(mdl, "softmax", np.diag([math.sqrt(2), 1.0]), n_mc=2**11 if QUICK else 2**14, n_rep=4)
t_sp, c_sp = time.perf_counter() - t0, time.process_time() - c0
err = float(np.max(np.r_[sp.err_longitudinal, sp.err_transverse, sp.err_orthogonal]))
print(f"[2] stability spectrum at the Bayes point: {t_sp:.2f} s wall, {c_sp:.2f} s CPU (target <= 5 s), eigenvalues {np.round(sp.all, 4).tolist()}, "
      f"largest standard error {err:.1e}")
# plain Monte Carlo: spread of one gradient entry per draw set, Sobol vs plain, gives the size plain MC needs
Wt = np.array([[1.2, 0], [0, 0.9], [0.3, 0], [0, 0.3]])
def spread_of(qmc, n):
    return np.std([risk_grad(Wt, dyn_draws(mdl, n, s, qmc=qmc), "softmax").grad for s in range(6)], axis=0, ddof=1).max()
n0 = 2**10 if QUICK else 2**13
f = (spread_of(False, n0) / spread_of(True, n0))**2
print(f"[2] plain Monte Carlo needs {f:.1f}x more sequences than the Sobol net for the same gradient spread (n = {n0})")
ratio("stability spectrum: plain Monte Carlo / Sobol net at equal accuracy (cost ratio = size ratio)", f, f"n = {n0}")
