"""Benchmark of the SLR learning dynamics (plain script; prints timings and speed ratios).

1. One SGD-limit ODE trajectory (softmax, eta = 1, spiked L = 3, nu = 2, the book's running example) to t = 40 at a Monte Carlo
   accuracy of 0.01 in every overlap (target: <= 2 s of CPU on one core). The accuracy is the largest standard error over
   the time grid and over the seven overlaps (the three cross overlaps are exactly 0), from the spread of 4 independent draw
   sets (3 degrees of freedom). Baseline in the same run: the plain Sobol estimator (every Gaussian drawn; the default before
   the conditional estimator) on the same number of sequences; its CPU time at the target accuracy is extrapolated with the
   1/n law of a Monte Carlo variance (stated as such); these runs switch off integrate's Richardson step, so that the
   comparison is of the Monte Carlo estimators alone. The time-step error (integrate's default Richardson extrapolation, runs at
   dt and dt/2, against the plain Heun run and a dt -> 0 reference on the same draws) is printed beside the Monte Carlo error,
   with the cost of the extrapolation. The 4-replicate error estimate has only 3 degrees of freedom (it scatters by
   about 40%), so the accuracy is also measured, outside the timing, from 16 independent replicates (15 degrees of freedom): the
   standard error of a 4-replicate trajectory is their standard deviation / 2; the target is checked on that.
2. The same ODE against the D = 4000 online-SGD simulation it replaces at the same accuracy: SGD is timed over a short
   stretch with 2 batched seeds and extrapolated (its cost is linear in t); the number of seeds needed for a standard error
   equal to the ODE's comes from the seed-to-seed spread of the cached D = 4000 runs (data/slr_dyn_sgd.npz, t <= 10) when
   present, else from the measured stretch.
3. The stability spectrum at one point (softmax at the Bayes point; target <= 5 s), against the same Hessian by plain
   Monte Carlo draws (no Sobol net) at the same accuracy.

Every ratio is baseline / new (> 1: the new route is cheaper). The load line says how busy the (shared) machine was.

Run: .venv/bin/python benchmarks/bench_slr_dynamics.py [--quick]   (--quick: t = 4, D = 500, small nets; seconds)
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import math, time
from pathlib import Path
import numpy as np
from attnstat.core import spawn
from attnstat.slr.models import SpikedSLR
from attnstat.slr.dynamics import integrate, online_sgd, stability_spectrum, dyn_draws, risk_grad, OVERLAP_NAMES
from _bench import QUICK, ratio, load

print(f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, {load()}")
mdl = SpikedSLR(3, 2.0)
T = 4.0 if QUICK else 40.0
D = 500 if QUICK else 4000
N_MC = 2**10 if QUICK else 2**13
TARGET = 0.01
MAIN = [0, 3, 4, 6]          # m_k, m_v, q_k, q_v (the cross overlaps stay exactly 0 on the manifold)


def ode(conditional, n=N_MC, dt=0.2, draws=None, richardson=False):
    "One SGD-limit ODE trajectory (Monte Carlo comparison: no Richardson step unless asked); returns it with its CPU and wall time."
    c0, t0 = time.process_time(), time.perf_counter()
    opts = dict(dt=dt, n_out=21, richardson=richardson)
    if draws is None: opts.update(n_mc=n, n_rep=4, conditional=conditional)
    tr = integrate(mdl, "softmax", T, eta=1.0, draws=draws, options=opts)
    return tr, time.process_time() - c0, time.perf_counter() - t0


def accuracy(tr):
    "Largest standard error over the time grid and all seven overlaps, and the overlap that holds it."
    worst = np.nanmax(tr.err, axis=0)
    return float(worst.max()), OVERLAP_NAMES[int(np.argmax(worst))], worst


# 1. the conditional estimator against the plain one, same number of sequences (after a warm-up: the first call imports scipy's qmc)
for cd in (True, False): integrate(mdl, "softmax", 0.2, eta=1.0, options=dict(n_mc=16, n_rep=2, n_out=2, conditional=cd))
tr_c, c_c, w_c = ode(True)
acc_c, where_c, per_c = accuracy(tr_c)
tr_p, c_p, w_p = ode(False)
acc_p, where_p, per_p = accuracy(tr_p)
cal_note = ""
if not QUICK:    # the accuracy of a 4-replicate trajectory, measured from 16 replicates (not timed), for both estimators
    for tag, cd in (("conditional", True), ("plain Sobol", False)):
        cal = integrate(mdl, "softmax", T, eta=1.0, seed=99, options=dict(dt=0.2, n_out=21, n_mc=N_MC, n_rep=16, conditional=cd))
        per_cal = np.nanmax(cal.err * math.sqrt(16) / 2, axis=0)
        print(f"[1] accuracy of a 4 x {cal.n_mc} {tag} trajectory from 16 replicates (15 degrees of freedom; max over t): {per_cal.max():.4f}; "
              "per overlap " + ", ".join(f"{OVERLAP_NAMES[i]} {per_cal[i]:.4f}" for i in MAIN))
        if cd: acc_c = float(per_cal.max())
        else: acc_p = float(per_cal.max())
    cal_note = " (accuracy from 16 replicates)"
for name, tr, c, w, acc, where, per in (("conditional", tr_c, c_c, w_c, *accuracy(tr_c)), ("plain Sobol", tr_p, c_p, w_p, *accuracy(tr_p))):
    print(f"[1] SGD-limit ODE, {name} estimator, 4 x {tr.n_mc} sequences (2^{int(math.log2(tr.n_mc // 2))} and their mirror copies), t = {T:g}, "
          f"{tr.n_steps} Heun steps: {c:.2f} s CPU, {w:.2f} s wall; its own error estimate (4 replicates, max over t) {acc:.4f} in {where}; "
          "per overlap " + ", ".join(f"{OVERLAP_NAMES[i]} {per[i]:.4f}" for i in MAIN))
print(f"[1] q_k({T:g}) = {tr_c.at('q_k')[-1]:.4f} +- {tr_c.err_of('q_k')[-1]:.4f} (conditional), {tr_p.at('q_k')[-1]:.4f} +- {tr_p.err_of('q_k')[-1]:.4f} (plain): "
      f"difference {abs(tr_c.at('q_k')[-1] - tr_p.at('q_k')[-1]) / math.hypot(tr_c.err_of('q_k')[-1], tr_p.err_of('q_k')[-1]):.2f} combined standard errors")
ok = acc_c <= TARGET and c_c <= 2.0
print(f"[1] target (accuracy <= {TARGET} in every overlap at t = 40 in <= 2 s CPU): "
      f"{'met' if ok and not QUICK else 'not met' if not QUICK else 'quick mode'}{cal_note}: accuracy {acc_c:.4f}, {c_c:.2f} s CPU")
c_p_target = c_p * max(1.0, (acc_p / TARGET)**2)
ratio(f"ODE to t = {T:g} at accuracy {TARGET}: plain Sobol (extrapolated, variance ~ 1/n) / conditional estimator, CPU time",
      c_p_target / (c_c * max(1.0, (acc_c / TARGET)**2)), f"same n: plain accuracy {acc_p:.3f}, conditional {acc_c:.4f}{cal_note}")
ratio(f"ODE to t = {T:g}, same sequences (4 x {tr_c.n_mc}): plain Sobol variance / conditional variance (worst overlap)", (acc_p / acc_c)**2,
      f"the factor in sequences the conditional estimator saves{cal_note}")
# the time-step error: integrate's default (Richardson, runs at dt and dt/2 on the same draws) against the plain Heun run, and
# both against a dt -> 0 reference (dt / 8, extrapolated) on the same draws
d = [dyn_draws(mdl, N_MC, s, conditional=True) for s in spawn(0, 4)]
a, c_a, _ = ode(True, draws=d); b, c_b, _ = ode(True, draws=d, richardson=True); r, _, _ = ode(True, dt=0.025, draws=d, richardson=True)
dev_a, dev_b = (np.nanmax(np.abs(x.overlaps - r.overlaps)[:, MAIN], axis=0) for x in (a, b))
print(f"[1] time step dt = 0.2, deviation from the dt -> 0 reference on the same draws (max over t; m_k, m_v, q_k, q_v): plain Heun "
      + ", ".join(f"{v:.1e}" for v in dev_a) + "; Richardson " + ", ".join(f"{v:.1e}" for v in dev_b) + "; its err_step "
      + ", ".join(f"{v:.1e}" for v in np.nanmax(b.err_step[:, MAIN], axis=0)) + "; Monte Carlo err_mc "
      + ", ".join(f"{v:.1e}" for v in np.nanmax(b.err_mc[:, MAIN], axis=0)))
print(f"[1] Richardson costs {c_b:.2f} s CPU against {c_a:.2f} s for the plain Heun run ({c_b / c_a:.1f}x)")

# 2. ODE vs online SGD at the same accuracy
t_stretch = 0.25 if QUICK else 1.0
c0 = time.process_time(); s = online_sgd(mdl, "softmax", D, t_stretch, eta=1.0, seed=0, options=dict(n_seeds=2, n_out=3))
c_sgd_seed = (time.process_time() - c0) / 2 * (T / t_stretch)          # CPU of one seed, extrapolated to t = T
cache = Path(__file__).resolve().parents[1] / "data" / "slr_dyn_sgd.npz"
Dc = None
if cache.exists() and not QUICK:
    Z = np.load(cache)
    dims = sorted(int(k.split("_D")[1].split("_")[0]) for k in Z.files if k.startswith("softmax_D") and k.endswith("_sim"))
    if dims: Dc = dims[-1]
if Dc is not None:
    sim = Z[f"softmax_D{Dc}_sim"]
    spread = float(np.max(np.std(sim[:, :, MAIN], axis=0, ddof=1))) * math.sqrt(Dc / D)   # fluctuations ~ D^(-1/2)
    src = f"the cached D = {Dc} runs to t = 10 (max over t of the seed-to-seed standard deviation, scaled by (D_cached/D)^(1/2))"
else:
    spread = float(np.max(np.std(s.overlaps[:, -1, MAIN], axis=0, ddof=1))); src = f"this stretch (D = {D}, 2 seeds)"
seeds = max(1, math.ceil((spread / acc_c)**2))
c_sgd = seeds * c_sgd_seed
print(f"[2] online SGD, D = {D}, eta = 1: {c_sgd_seed:.1f} s CPU per seed to t = {T:g} (measured on t <= {t_stretch:g}); "
      f"seed spread {spread:.3f} from {src}: {seeds} seed(s) for the ODE's accuracy {acc_c:.4f}, {c_sgd:.1f} s CPU")
ratio(f"online SGD (D = {D}, same accuracy {acc_c:.4f} in every overlap) / SGD-limit ODE (conditional), t = {T:g}, CPU time", c_sgd / c_c,
      "target: the ODE at accuracy 0.01 in <= 2 s at t = 40")

# 3. stability spectrum
c0 = time.process_time(); t0 = time.perf_counter()
sp = stability_spectrum(mdl, "softmax", np.diag([math.sqrt(2), 1.0]), n_mc=2**11 if QUICK else 2**14, n_rep=4)
t_sp, c_sp = time.perf_counter() - t0, time.process_time() - c0
err = float(np.max(np.r_[sp.err_longitudinal, sp.err_transverse, sp.err_orthogonal]))
print(f"[3] stability spectrum at the Bayes point: {t_sp:.2f} s wall, {c_sp:.2f} s CPU (target <= 5 s), eigenvalues {np.round(sp.all, 4).tolist()}, "
      f"largest standard error {err:.1e}")
# plain Monte Carlo: spread of one gradient entry per draw set, Sobol vs plain, gives the size plain MC needs
Wt = np.array([[1.2, 0], [0, 0.9], [0.3, 0], [0, 0.3]])
def spread_of(qmc, n):
    return np.std([risk_grad(Wt, dyn_draws(mdl, n, s, qmc=qmc), "softmax").grad for s in range(6)], axis=0, ddof=1).max()
n0 = 2**10 if QUICK else 2**13
f = (spread_of(False, n0) / spread_of(True, n0))**2
print(f"[3] plain Monte Carlo needs {f:.1f}x more sequences than the Sobol net for the same gradient spread (n = {n0})")
ratio("stability spectrum: plain Monte Carlo / Sobol net at equal accuracy (cost ratio = size ratio)", f, f"n = {n0}")
print(f"done; {load()}")
