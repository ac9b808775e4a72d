"""Mutation test of the public API (issues 19 and 28): every public callable of attnstat.slr, attnstat.rmt,
attnstat.gaussian, attnstat.fixed_point, attnstat.sweep and attnstat.weights, every argument replaced in turn by a hostile
value, each called through the module that defines it (`attnstat.slr.population.bayes_risk_L2`, not only
`attnstat.slr.bayes_risk_L2`): the object is the same whatever the import path (`test_one_object_per_name` asserts it
for every public name), so the entry checks at the top of each function are what the test exercises, with nothing
wrapped around them. `test_user_errors_pass_through` and `test_warnings_point_at_the_caller` check the rest of the
entry contract: a user callable's own exception reaches the caller as raised, and a warning names the caller's line.

The cases are generated from the API itself (`__all__` and the signatures), so functions added later join
automatically. Each function gets a cheap *baseline* call (argument values by parameter name, `BY_NAME`, and recipes for
the functions that need built objects, `_recipes`); every function must have one (`SKIP` lists the few that are not
called, each with its reason). Then each argument in turn is replaced by each value of the mutation set.

How it runs: one *worker* per function is forked from the parent that built the fixtures; it makes the baseline call
(which also warms the function's caches) and then runs the function's cases in-process, each under a CPU-time timer
(`ITIMER_PROF`, `CAP_S`: a CPU cap, so a loaded machine does not turn slow cases into timeouts) and an address-space cap
(`RLIMIT_AS`), with the library's own guards set tighter (`ATTNSTAT_MAX_MEMORY`, `ATTNSTAT_MAX_SECONDS`) so that they,
not the caps, must stop what is too big. Arguments are deep-copied per case. A worker that times out ends (the state a
timer interrupts is not trusted); one that stops answering for `WALL_S` of wall-clock time is killed (a timeout), one
that dies is a crash; a fresh worker continues with the next case. Each outcome is one of
  named      a ValueError/TypeError (or FileNotFoundError) whose message names the mutated parameter
  converged  a ConvergenceError (the documented failure of a solver)
  finite     a result whose numbers are all finite (or non-finite only in documented fields, DOCUMENTED_NONFINITE)
and every other outcome fails the test: an error that names another parameter or none ("unnamed"), a raw exception
("raw": OverflowError, KeyError, ... ; MemoryError), an undocumented NaN/inf in the result ("nonfinite"), a run past
the cap ("timeout") or a worker killed ("crash").

`test_mutation_shard` runs one shard of the whole set (`MUTATION_SHARD`, default 0/8; every function, about 1/8 of its
cases) in the normal suite; `test_mutation_full` (marked slow; `MUTATION_FULL=0` deselects it) runs every case: 27 083
cases over 191 functions in about 160 s of CPU on one core (measured 2026-12-01; 4-6 min wall-clock on the shared 2-core
machine), all of them named, converged or finite.
`python tests/test_mutation.py [--full | --shard i/k | --only NAME ... | --start-at NAME | --seed S --n N]` prints the
counts per outcome, the costliest functions and every failing case.
"""
import contextlib, dataclasses, importlib, inspect, json, math, os, pickle, random, re, resource, signal, sys, tempfile, time, warnings
from pathlib import Path
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))

MODULES = ("attnstat.slr", "attnstat.rmt", "attnstat.gaussian", "attnstat.fixed_point", "attnstat.sweep", "attnstat.weights",
           "attnstat.store", "attnstat.data")
CAP_S = 6                   # CPU-time cap per case (the library's ATTNSTAT_MAX_SECONDS below is 3 s)
WORKDIR = None
WALL_S = 60                 # wall-clock cap per case (a call that waits; generous: the machine may be loaded)
CAP_AS = 6 * 2**30          # address-space cap per case (the library's ATTNSTAT_MAX_MEMORY below is 1 GiB)
GUARDS = {"ATTNSTAT_MAX_MEMORY": "1GiB", "ATTNSTAT_MAX_SECONDS": "3"}
SAMPLE = int(os.environ.get("MUTATION_SAMPLE", "200"))   # cases in a fixed-seed sample (the command line's --n)
SHARD = os.environ.get("MUTATION_SHARD", "0/8")           # the shard of the whole set in the normal suite
SEED = int(os.environ.get("MUTATION_SEED", "19"))

# ---------------------------------------------------------------------------------------------------------------
# The mutation set (the issue's): non-finite and extreme reals, signs, zero, booleans, strings, None, numpy scalars,
# huge integers, empty and wrong-shaped arrays, bad models and length laws.
# ---------------------------------------------------------------------------------------------------------------
class _Junk: "An object of no expected type."

MUTATIONS = {
    "nan": float("nan"), "+inf": float("inf"), "-inf": -float("inf"), "-1": -1, "0": 0, "1e300": 1e300, "1e-300": 1e-300,
    "True": True, "False": False, "'2'": "2", "'abc'": "abc", "None": None, "np.float64(2)": np.float64(2.0),
    "np.int64(3)": np.int64(3), "10**6": 10**6, "10**12": 10**12, "10**30": 10**30, "2.5": 2.5,
    "[]": [], "zeros(0)": np.zeros(0), "zeros((2,3,4))": np.zeros((2, 3, 4)), "[nan, 1]": [float("nan"), 1.0],
    "object()": _Junk(), "lengths {2: 0.5}": {2: 0.5}, "lengths {0: 1}": {0: 1.0},
}

def _bad_models():
    "A model whose length law is broken after construction (bypassing its checks), and a model of another kind."
    from attnstat.slr import SpikedSLR
    m = SpikedSLR(3, 2.0)
    broken = object.__new__(type(m)); broken.__dict__.update(m.__dict__)
    with contextlib.suppress(Exception): object.__setattr__(broken, "nu", float("nan"))
    return {"model(nu=nan)": broken, "model 'spiked'": "spiked"}

# ---------------------------------------------------------------------------------------------------------------
# Baselines: argument values by parameter name, and recipes for functions that need built objects.
# ---------------------------------------------------------------------------------------------------------------
def _toy_point(x, seed=None): return {"y": float(x) * 2.0}

def _fixtures(tmp):
    from attnstat.slr import SpikedSLR, teacher, channel_sample, nishimori_sample
    from safetensors.numpy import save_file
    rng = np.random.default_rng(0)
    model = SpikedSLR(3, 2.0)
    ks, vs = teacher(8, 0)
    from attnstat.sweep import run_sweep
    run_sweep(_toy_point, [{"x": 1.0}], cache=tmp / "read.csv", progress=False, backend="sequential")
    st = tmp / "w.safetensors"
    save_file({f"encoder.layer.{l}.attention.self.{k}.weight": rng.standard_normal((4, 4)).astype(np.float32)
               for l in range(2) for k in ("query", "key")}, str(st))
    (tmp / "config.json").write_text('{"num_attention_heads": 2}')
    X3 = rng.standard_normal((6, 3, 8)); W = rng.standard_normal((4, 4))
    return dict(model=model, ks=ks, vs=vs, st=st, X3=X3, W=W, rng=rng, tmp=tmp,
                S=channel_sample(model, 128, 0), NS=nishimori_sample(model, 200, 0, 8))

BY_NAME = {   # parameter name -> value (a callable takes the fixtures)
    "model": lambda F: F["model"], "activation": "softmax", "f": "tanh", "alpha": 2.0, "lam": 0.1, "lam_k": 0.1, "lam_v": 0.1,
    "L": 3, "nu": 2.0, "noise": 0.0, "m_k": 0.5, "q_k": 1.0, "m_v": 0.5, "q_v": 1.0, "c": 0.5, "D": 8, "n": 16, "p": 8,
    "gamma": 1.0, "gammas": [0.1, 1.0], "mu": [1.0, 0.0], "w_K": [1.0, 0.0], "w_Q": [0.5, 0.5], "snr": 1.0, "trials": 2,
    "seed": 0, "mc_seed": 0, "n_mc": 512, "n_test": 50, "z": -1.0, "x": 1.0, "a1": 0.5, "sigma2": 1.0, "mean": 0.0,
    "var": 1.0, "std": 1.0, "samples": [1.0, 2.0, 4.0], "F": lambda F: np.cos, "x0": 0.5, "params": [0.1, 0.2],
    "func": lambda F: _toy_point, "points": [{"x": 1.0}, {"x": 2.0}], "path": lambda F: F["st"], "W": lambda F: F["W"],
    "rank": 1, "names": ["encoder.layer.0.attention.self.query.weight"], "name": "encoder.layer.0.attention.self.query.weight",
    "k": lambda F: F["ks"], "v": lambda F: F["vs"], "k_star": lambda F: F["ks"], "v_star": lambda F: F["vs"],
    "X": lambda F: F["X3"], "M": lambda F: np.eye(2) * 0.3, "Q": lambda F: np.eye(2) * 0.5, "m": 8, "u": [0.0, 1.0],
    "header": {"params": {}, "version": "0", "seed": 0}, "columns": ["a"], "cells": ["1"], "point": {"x": 1.0},
    "alphas": [1.0, 2.0], "models": lambda F: [F["model"]], "rows": lambda F: [{"alpha": 1.0, "init": "informed", "test_error": 0.5, "train_loss": 0.1, "m_k": 0.1, "q_k": 0.2, "m_v": 0.1, "q_v": 0.2, "m_kv": 0.0, "m_vk": 0.0, "q_kv": 0.0}] * 2,
    "S": lambda F: F["S"], "q": [0.2, 0.3], "qhat": [0.5, 0.5], "psi_out": -1.0, "gram": np.eye(3), "Phi": lambda F: F["rng"].standard_normal((16, 8)),
    "y": lambda F: np.sign(F["rng"].standard_normal(16)), "level": 1.0, "eff": None, "dof": 2.0, "cs": [0.5], "snrs": [1.0],
    "weights": "identity", "scale": "raw", "m0": [0.1, 0.1], "q0": [0.2, 0.2], "replicon": 0.5, "replicon_se": 0.1,
    "kind": "bias", "s": [0.0, 0.5], "t": [0.0, 1.0, 2.0], "t_max": 1.0, "eta": 0.1, "eta_hi": 1.0, "C": lambda F: np.eye(2) * 0.5,
}

def _recipes(F):
    "Baseline keyword arguments for functions that the by-name table cannot serve."
    from attnstat.rmt import aligned_vectors
    from attnstat.weights import effective_fplr
    rng = F["rng"]
    Xr = rng.standard_normal((16, 8))
    return {
        "attention_kernel": dict(X=Xr, f="tanh", w_K=np.r_[1.0, np.zeros(7)], w_Q=np.r_[1.0, np.zeros(7)]),
        "gaussian_equivalent_kernel": dict(X=Xr, f="tanh", w_K=np.r_[1.0, np.zeros(7)], w_Q=np.r_[1.0, np.zeros(7)]),
        "ridge_errors": dict(Phi=Xr.T, y=np.sign(rng.standard_normal(16)), gammas=[0.1, 1.0]),
        "bilinear_kernel": dict(X=Xr[:, :4].T, W=F["W"], f="tanh"), "matched_dof_gamma": dict(f="tanh", c=0.5, dof=0.2),
        "positional_empirical_risk": dict(model=F["model"], kind="linear", k=F["ks"], v=F["vs"], k_star=F["ks"], v_star=F["vs"], n=200),
        "positional_risk_mc": dict(model=F["model"], kind="linear", M=np.eye(2) * 0.3, Q=np.eye(2) * 0.5, n=500),
        "bayes_optimal_branches": dict(model=F["model"], alpha=2.0, n_mc=400, n_blocks=0),
        "replica_curve": dict(model=F["model"], activation="linear", alphas=[2.0], lam=0.1, starts=("informed",), directions=("up",),
                              progress=False, options=dict(n_mc=128, n_rand=1, diagnostics=False)),
        "simulate_sweep": dict(model=F["model"], activation="linear", alphas=[2.0], lam=0.1, D=8, seed=range(1), inits=("informed",),
                               progress=False),
        "label_branches": dict(rows=[]),
        "simulate_errors": dict(W=F["W"], f="tanh", mu=[1.0, 0, 0, 0], n=16, gammas=[1.0], trials=2),
        "fit_identity_low_rank": dict(W=F["W"], rank=1), "fplr_residuals": dict(W=F["W"], ranks=(0, 1)),
        "identity_cosine": dict(W=F["W"]), "effective_fplr": dict(W=F["W"]),
        "fplr_predictions": dict(eff=effective_fplr(F["W"]), f="tanh", mu=[1.0, 0.0, 0.0, 0.0], c=0.5, gammas=[1.0]),
        "rescaled_activation": dict(f="tanh", alpha=1.5), "variance_matched_activation": dict(f="tanh", alpha=0.5),
        "safetensors_header": dict(path=F["st"]), "read_weight": dict(path=F["st"], name="encoder.layer.0.attention.self.query.weight"),
        "read_config": dict(path=F["tmp"] / "config.json"), "load_attention_weights": dict(path=F["st"], n_heads=2),
        "detect_layout": dict(names=[f"encoder.layer.{l}.attention.self.{k}.weight" for l in range(2) for k in ("query", "key")]),
        "read_sweep": dict(path=F["tmp"] / "read.csv"), "lock_path": dict(path=F["tmp"] / "cache.csv"),
        "apply_umask": dict(path=F["tmp"] / "mode.txt"),
        "run_sweep": dict(func=_toy_point, points=[{"x": 1.0}, {"x": 2.0}], backend="sequential", progress=False,
                          cache=F["tmp"] / "cache.csv", seed=1),
        "continuation": dict(F=lambda x, a: np.cos(x) * a, params=[0.1, 0.2], x0=0.5),
        "gauss_expect_2d": dict(f=lambda x, y: x * y, mean=(0.0, 0.0), cov=((1.0, 0.5), (0.5, 1.0))),
        "gauss_expect": dict(f=np.cos), "quad_expect": dict(f=np.cos), "sobol_normal": dict(m=8, d=2),
        "fixed_point": dict(F=np.cos, x0=0.5), "hermite_rule": dict(n=8),
        "empirical_errors": dict(f="tanh", n=16, p=4, mu=[1.0, 0.0], w_K=[1.0, 0.0], w_Q=[1.0, 0.0], gammas=[1.0], trials=2, seed=0),
        "simulate_test_errors": dict(f="tanh", n=16, p=4, mu=[1.0, 0.0], w_K=[1.0, 0.0], w_Q=[1.0, 0.0], gammas=[1.0], trials=2, seed=0, n_test=20),
        "signal_plus_noise": dict(n=16, p=4, mu=[1.0, 0.0]),
        "empirical_risk": dict(model=F["model"], activation="softmax", k=F["ks"], v=F["vs"], k_star=F["ks"], v_star=F["vs"], n=200),
        "population_risk_mc": dict(model=F["model"], activation="softmax", M=np.eye(2) * 0.3, Q=np.eye(2) * 0.5, n=500),
        "bayes_risk_mc": dict(model=F["model"], n=500), "attention_predict": dict(X=F["X3"], k=F["ks"], v=F["vs"], activation="softmax"),
        "replica_erm": dict(model=F["model"], activation="linear", alpha=2.0, lam=0.1, options=dict(n_mc=128, n_rand=1, diagnostics=False)),
        "bayes_optimal_error": dict(model=F["model"], alpha=2.0, n_mc=400, n_blocks=0),
        "bayes_phase_diagram": dict(model=F["model"], alphas=[1.0, 2.0], n_mc=400),
        "simulate_erm": dict(model=F["model"], activation="linear", alpha=2.0, lam=0.1, D=8, n_test=20),
        "simulate_amp": dict(model=F["model"], alpha=2.0, D=8, n_test=20, max_iter=5),
        "state_evolution": dict(model=F["model"], alpha=2.0, m0=[0.1, 0.1], q0=[0.2, 0.2], n_iter=2, n_mc=200),
        "channel_sample": dict(model=F["model"], n=128), "channel_samples": dict(model=F["model"], n=256, n_rand=2),
        "nishimori_sample": dict(model=F["model"], n_mc=200, n_inner=8), "inner_draws": dict(m=8, L=3),
        "nishimori_terms": dict(model=F["model"], q=[0.2, 0.3], S=F["NS"]),
        "optimal_population_risk": dict(model=F["model"], activation="linear"),
        "optimal_risk_curve": dict(models=[F["model"]], activation="linear"),
        "teacher": dict(D=8), "aligned_vectors": dict(snr=1.0), "fplr_weights": dict(w_K=[1.0, 0.0], w_Q=[0.5, 0.5], p=4),
        "balanced_labels": dict(n=16), "diagonal_level": dict(f="tanh", p=8), "kernel_stieltjes": dict(z=-1.0 + 0.5j, c=0.5, a1=0.5, sigma2=1.0),
        "kernel_density": dict(x=1.0, c=0.5, a1=0.5, sigma2=1.0), "mp_stieltjes": dict(z=-1.0, c=0.5),
        "mp_stieltjes_derivative": dict(z=-1.0, c=0.5), "gram_matrix": dict(mu=[1.0, 0.0], w_K=[1.0, 0.0], w_Q=[0.5, 0.5]),
        "point_key": dict(point={"x": 1.0}), "point_seed": dict(seed=1, point={"x": 1.0}),
        "sweep_header": dict(params={"a": 1}, seed=1), "row_key": dict(header={"params": {}, "version": "0", "seed": 0}, columns=["a"], cells=["1"]),
    }

def _quadratic(x, derivatives=False):
    "A toy objective for batched_newton: sum (x - 1)^2 per row, with its gradient and Hessian."
    phi = np.sum((x - 1.0) ** 2, -1)
    if not derivatives: return phi
    return phi, 2 * (x - 1.0), np.broadcast_to(2 * np.eye(x.shape[-1]), x.shape + x.shape[-1:]).copy()

def _mh_recipes():
    "Baselines of attnstat.slr.multihead: K = 2 features, H = 2 heads, tiny sizes."
    from attnstat.slr.multihead import (MultiFeatureSLR, sample_fields, sample_tokens, mh_draws, reduced_weights_mh,
                                        mh_online_sgd)
    m = MultiFeatureSLR(3, (2.0, 1.0), 0.5, noise=0.1)
    Fm = sample_fields(m, 16, 1); X, _ = sample_tokens(m, 8, 6, 2)
    M = np.array([[0.5, 0.1, 0.0, 0.0], [0.5, 0.1, 0.0, 0.0], [0.0, 0.0, 0.4, 0.1], [0.0, 0.0, 0.4, 0.1]])
    C = 0.2 * np.eye(4) + 0.01
    d = mh_draws(m, 2, 64, 3)
    traj = mh_online_sgd(m, "softmax", 2, 16, 0.2, n_seeds=2, seed=4, n_out=3)
    return {
        "MultiFeatureSLR": dict(L=3, nu=(2.0, 1.0), p=0.5, noise=0.1, prior=None),
        "sample_fields": dict(model=m, n=16), "sample_tokens": dict(model=m, n=8, D=8),
        "bayes_posterior": dict(model=m, chi_star=Fm.chi_star), "bayes_predict": dict(model=m, chi_star=Fm.chi_star, z_star=Fm.z_star),
        "mf_bayes_risk": dict(model=m, n=256, n_rep=2), "bruteforce_posterior_mean": dict(model=m, X=X),
        "mh_predict": dict(activation="sink", chi=Fm.chi_star, z=Fm.z_star, c=np.array([0.5, 1.0])),
        "MHDraws": dict(G=d.G, y=d.y, K=2, H=2), "mh_draws": dict(model=m, H=2, n=64),
        "reduced_weights_mh": dict(M=M, C=C),
        "mh_risk_grad": dict(Wt=reduced_weights_mh(M, C), draws=d, activation="sink", c=np.array([0.5, 1.0])),
        "mh_population_risk": dict(model=m, activation="softmax", M=M, Q=C + M @ M.T, n=128),
        "mh_optimal_risk": dict(model=MultiFeatureSLR(3, 2.0, 0.5), activation="softmax", H=1, n=64, n_eval=128, n_starts=1),
        "mh_flow_rhs": dict(M=M, C=C, c=np.zeros(2), draws=d, activation="softmax", eta=0.5),
        "mh_integrate": dict(model=m, activation="softmax", start=(M, C, 0.0), t_max=0.2, dt=0.1, n_mc=64, n_rep=1, n_out=2),
        "mh_online_sgd": dict(model=m, activation="softmax", H=2, D=16, t_max=0.2, n_seeds=2, n_out=2),
        "transverse_rate": dict(model=m, activation="softmax", M=M, C=C, eta=0.5, n_mc=32),
        "transverse_noise": dict(model=m, activation="softmax", M=M, C=C, u=np.ones(34), n_mc=64),
        "escape_times": dict(traj=traj, feature=0, level=0.1),
        "SinkSoftmax": dict(name="s", C=1.0),
        "EscapeLaw": dict(log_eps=[-5.0, -3.0, -1.0], t_ode=[[30.0, 20.0, 10.0]], Sigma0=[[0.2]], Sigma=[[0.3]]),
    }

def _recipes_more(F):
    "Baselines of the solver internals, the dynamics and positional helpers and the multi-head module."
    from attnstat.slr import SpikedSLR
    from attnstat.slr.activations import get_activation
    from attnstat.slr.replica import channel_sample
    from attnstat.slr.dynamics import dyn_draws, reduced_weights
    from attnstat.rmt import head_family
    rng, model = np.random.default_rng(1), F["model"]
    n, L = 24, 3
    omk, omv, y = 2 * rng.normal(size=(n, L)), rng.normal(size=(n, L)), rng.normal(size=n)
    mask = np.ones((n, L), bool)
    d = model.sample(24, 6, seed=1)
    draws = dyn_draws(model, 256, 1)
    M, C = np.array([[0.8, 0.1], [0.05, 0.7]]), np.array([[0.3, 0.05], [0.05, 0.4]])
    Wt = reduced_weights(M, C)
    S = F["S"]
    chi = S.chi_star if S.chi_star is not None else omk
    T3 = rng.normal(size=(40, 3, 3))
    mu, WK, WQ = head_family("hetero", 2)
    mu1, WK1, WQ1 = head_family("identical", 2)   # one direction: inside the finite-p derivation's span
    ss = dict(f="tanh", c=0.5, gamma=[1.0], mu=[1.0, 0.0], w_K=[1.0, 0.0], w_Q=[0.5, 0.5], p=128)
    Xm = rng.standard_normal((len(mu), 16))
    from attnstat.slr.replica import replica_erm
    rep = replica_erm(model, "linear", 2.0, 0.1, sample=S, options=dict(diagnostics=False))
    from attnstat.slr.positional import BiasedSoftmax
    rep_b = replica_erm(model, BiasedSoftmax([0.0, -0.5, 1.0]), 2.0, 0.1, sample=S,
                        options=dict(diagnostics=False, test_method="monte carlo"))
    return {
        **_mh_recipes(),   # attnstat.slr.multihead (issue 31)
        "NormalisedActivation": dict(name="toy", log_a=lambda s: s, dlog_a=lambda s: np.ones_like(s)),
        "ElementwiseActivation": dict(name="toy", phi=np.tanh, dphi=lambda s: 1 - np.tanh(s) ** 2),
        "prox_objective": dict(activation="softmax", chi=omk + 0.1, omk=omk, omv=omv, y=y, Vk=0.7, Vv=0.4),
        "prox_newton": dict(activation="softmax", omk=omk, omv=omv, y=y, Vk=0.7, Vv=0.4),
        "prox_global": dict(activation="softmax", omk=omk, omv=omv, y=y, Vk=0.7, Vv=0.4, n_scan=4, keep=2),
        "batched_newton": dict(objective=_quadratic, x0=np.zeros((4, 2)), args=()),
        "prior_update": dict(hats=np.array([0.5, 0.4, 0.3, 0.2, 0.1, 0.1]), lam_k=0.1, lam_v=0.1),
        "replicon_estimate": dict(T_samples=[T3, T3 * 1.1]),
        "replica_erm_matrix": dict(model=model, activation="softmax", alpha=2.0, lam=0.5, init="informed", n_mc=128, max_iter=8,
                                   on_fail="warn"),
        "location_prior": dict(model=model, omk=omk, Vk=0.7, mask=mask, n_gh=4),
        "bayes_channel": dict(model=model, y=y, omk=omk, omv=omv, Vk=0.7, Vv=0.4, mask=mask, n_gh=4),
        "bayes_prediction": dict(model=model, omk=omk, omv=omv, Vk=0.7, mask=mask, n_gh=4),
        "erm_objective": dict(w=rng.normal(size=12), X=d.X, y=d.y, activation="softmax", lam_k=0.1, lam_v=0.1, mask=d.mask),
        "lbfgs_batch": dict(fun=lambda W: (np.sum((W - 1.0) ** 2, 0), 2 * (W - 1.0)), W0=np.zeros((3, 2)), max_iter=50),
        "laplace_terms": dict(pi=[0.5, 0.5], mu_sel=[1.0, 0.0], mu_0=[0.0, 0.0], var=[1.0, 1.0], n=16),
        "erm_bias_objective": dict(theta=rng.normal(size=12 + L - 1), X=d.X, y=d.y, mask=d.mask, lam=0.1),
        "BiasedSoftmax": dict(b=[0.0, -0.5, 1.0]),
        "bias_gradient": dict(model=model, res=rep_b, sample=S),
        "bias_risk_grad": dict(Wt=Wt, b=np.array([0.0, -0.4, 0.3]), draws=draws, lam=0.1),
        "bias_flow": dict(model=model, start=(M, C, np.zeros(3)), t_max=0.4, dt=0.2, n_mc=512, n_rep=2, n_out=3),
        "gamp": dict(model=model, X=d.X, y=d.y, mask=d.mask, W0=0.1 * np.ones((6, 2)), max_iter=5, n_gh=4),
        "Draws": dict(G=draws.G, y=draws.y, mask=draws.mask),
        "risk_grad": dict(Wt=Wt, draws=draws, activation="softmax"),
        "flow_rhs": dict(M=M, C=C, draws=draws, activation="softmax"),
        "stability": dict(activation="linear", x=rep.x, S=S, alpha=2.0, chi=rep.chi[0] if isinstance(rep.chi, list) else rep.chi),
        "channel_update": dict(activation="linear", x=rep.x, S=S, alpha=2.0),
        "erm_objective_batch": dict(W=rng.normal(size=(12, 3)), X=d.X, y=d.y, activation="softmax", lam_k=0.1, lam_v=0.1, mask=d.mask),
        "replica_erm_bias": dict(model=model, alpha=2.0, lam=0.1, n_mc=128, n_rand=1, max_outer=1),
        "eta_window": dict(model=model, activation="softmax", eta_hi=10.0, n_mc=512, tol=0.3),
        "gd_bias_simulation": dict(model=model, D=8, t_max=0.4, dt=0.2, batch=64, n_seeds=1, n_out=3),
        "stability_spectrum": dict(model=model, activation="softmax", M=M, n_mc=1024, n_rep=2),
        "escape_rate": dict(model=model, activation="softmax", C=C, n_mc=1024),
        "sgd_plateau": dict(model=model, activation="softmax", eta=0.1, n_mc=1024),
        "gf_fixed_point": dict(model=model, activation="softmax", n_mc=1024),
        "predictor_table": dict(model=model, n_mc=2000),   # attnstat.book.slr_positional
        "integrate": dict(model=model, activation="softmax", t_max=0.5, n_mc=1024, n_rep=2, n_out=3),
        "online_sgd": dict(model=model, activation="softmax", D=8, t_max=0.5, n_seeds=1, n_out=3, chunk=16),
        "gd_simulation": dict(model=model, activation="softmax", D=8, t_max=0.5, alpha=2.0, n_seeds=1, n_out=3),
        "attnstat.rmt.Nonlinearity": dict(f0=np.tanh, name="tanh2"),
        "NonlinearityFamily": dict(name="x", build=lambda L: np.tanh),
        "head_family": dict(family="hetero", H=2),
        "multihead_theory": dict(f="tanh", c=0.5, gamma=[0.1, 1.0], mu=mu, W_K=WK, W_Q=WQ),
        "multihead_error": dict(f="tanh", c=0.5, gamma=[0.1, 1.0], mu=mu, W_K=WK, W_Q=WQ),
        "multihead_test_error": dict(f="tanh", c=0.5, gamma=[0.1, 1.0], mu=mu, W_K=WK, W_Q=WQ),
        "compare_multihead_ridge": dict(f="tanh", c=0.5, gamma=[0.1, 1.0], mu=mu, W_K=WK, W_Q=WQ),
        "multihead_kernel": dict(X=Xm, f="tanh", W_K=WK, W_Q=WQ),
        "readout_features": dict(X=Xm, XK=Xm * 0.5, readout="sum"),
        "simulate_multihead": dict(f="tanh", n=16, p=len(mu), mu=mu, W_K=WK, W_Q=WQ, gammas=[0.1, 1.0], trials=2, seed=0),
        "cov_sqrt": dict(cov=np.array([[1.0, 0.5], [0.5, 1.0]])),
        # the finite-p theory answers for p >= P_MIN = 64 (strong_signal.P_MIN)
        "strong_signal_theory": ss, "strong_signal_error": ss, "strong_signal_test_theory": ss,
        "strong_signal_test_error": ss,
        "signal_kernel": {k: ss[k] for k in ("f", "mu", "w_K", "w_Q", "p")},
        "strong_signal_readout_theory": dict(f="tanh", c=0.5, gamma=[1.0], mu=mu1, W_K=WK1, W_Q=WQ1, p=128),
        "load_strong_signal_sims": dict(path=ROOT / "data" / "strong_signal_sims.csv"),
        "optimal_lambda": dict(model=F["model"], activation="linear", alpha=2.0,
                               options=dict(max_eval=4, replica=dict(n_mc=128, n_rand=1, diagnostics=False))),
        "tuned_curve": dict(model=F["model"], activation="linear", alphas=[2.0],
                            options=dict(max_eval=4, replica=dict(n_mc=128, n_rand=1, diagnostics=False))),
        # the store and the data folder (ATTNSTAT_DATA points at a temporary folder: guarded_env)
        "afresh": dict(path=F["tmp"] / "a.sqlite"), "canonical": dict(obj={"a": 1.0}),
        "entry_key": dict(table="t", params={"a": 1}, version="0.1", seed=0),
        "Store": dict(path=F["tmp"] / "s.sqlite"), "open_store": dict(path=F["tmp"] / "o.sqlite"),
        "remove_store": dict(path=F["tmp"] / "gone.sqlite"),
        "write_npz": dict(path=F["tmp"] / "x.npz", arrays={"a": np.zeros(2)}),
        "data_path": dict(name="slr_amp_track.csv"), "atomic_write": dict(path=F["tmp"] / "aw.txt", data="x"),
        "DataFolder": dict(prefix="figures"), "data_folder": dict(prefix="figures"),
    }

# Functions the generator does not call, with the reason (each is exercised by its notebook and test file).
SKIP = {
    "minilm_path": "no arguments; reads the installed package", "load_minilm": "reads the 90 MB checkpoint",
    "max_jobs": "no arguments",
    "register_activation": "mutates the global registry", "register_nonlinearity": "mutates the global registry",
    "register_head_mode": "mutates the global registry", "register_readout": "mutates the global registry",
    "register_head_family": "mutates the global registry",
    "run_strong_signal_sims": "writes a book data set (minutes)",
    "run_strong_signal_test_sims": "writes a book data set (minutes)",
    # the book's machinery (attnstat.book.slr_tables; attnstat.book is not in MODULES): kept in case it joins them
    "save_table": "writes files", "cached_table": "writes files", "load_table": "reads a table file",
}
DOCUMENTED_NONFINITE = {   # function: fields (or '*' suffixes) where NaN/inf is documented
    "ReplicaOptions": ("anderson_start",),
    "integrate": ("err_mc", "err_step"),   # a diverged flow (eta far above its window): no error estimate   # inf: Anderson from the first step (the warm starts' setting)
    "*": ("_se", "_sd", "err", "_err", "log_excess", "replicon", "jump_k", "jump_v"),
    "ridge_textbook": ("V",), "noise_fixed_point": ("trace",), "bbp_outlier": (), "free_entropy": (),
    # phi = +inf on the perfect-recovery branch (Delta = 0, alpha > 1); the transitions are nan when there is none
    "bayes_optimal_error": ("phi",), "bayes_optimal_branches": ("phi",),
    "bayes_phase_diagram": ("phi", "i_phi", "u_phi", "alpha_it", "alpha_spinodal_informed", "alpha_spinodal_uninformed",
                            "alpha_pr_it", "alpha_pr_alg"),
    "crossing_time": ("",),   # nan where the trajectory never crosses the level
    "prior_update": ("",),    # NaN when lam + Vhat <= 0 (its docstring)
    # the dynamics: nan after a divergence (the fields' comments; `diverged` flags it)
    "integrate": ("overlaps", "risk", "M", "C", "err_mc", "err_step"), "online_sgd": ("overlaps",), "gd_simulation": ("overlaps",),
    "escape_rate": ("slope",),   # slope = 1/(2 lambda_+) = inf when lambda_+ <= 0 (its docstring)
    "laplace_terms": ("err_A", "err_B"), "softmax_bias_terms": ("err_A", "err_B"),   # LaplaceTerms: nan when accuracy=False
    # multi-head SLR: the simulation's risk is nan (computed by the ODE only); inf where a run never escapes
    "mh_online_sgd": ("risk",), "escape_times": ("",),
}

def defining_modules(package):
    """{public name: the module that defines it} for a module of MODULES: for a lazy package (attnstat.slr, attnstat.rmt)
    the submodule whose `__all__` lists the name, for a plain module the module itself."""
    import pkgutil
    mod = importlib.import_module(package)
    if not hasattr(mod, "__path__"): return {n: package for n in mod.__all__}
    out = {}
    for info in pkgutil.iter_modules(mod.__path__):
        if info.name.startswith("_"): continue
        sub = importlib.import_module(f"{package}.{info.name}")
        for n in getattr(sub, "__all__", ()): out[n] = sub.__name__
    return out

def public_callables():
    """(module, name, callable) for every public function or validated class of the modules (new ones join); the
    callable is taken from its defining module, and is the package's own object (asserted)."""
    out = []
    for m in MODULES:
        mod, homes = importlib.import_module(m), defining_modules(m)
        for n in mod.__all__:
            o = getattr(importlib.import_module(homes.get(n, m)), n)
            assert o is getattr(mod, n), f"{m}.{n} is not {homes.get(n, m)}.{n}"
            if not callable(o) or n in SKIP: continue
            if inspect.isclass(o):
                if issubclass(o, (BaseException, list)): continue                  # exceptions, warnings, SweepRows
                if dataclasses.is_dataclass(o) and not hasattr(o, "__post_init__"): continue   # plain result records
            out.append((m, n, o))
    return out

def _value(v, F): return v(F) if callable(v) and not isinstance(v, type) and getattr(v, "__name__", "") == "<lambda>" else v

def baseline(name, func, F, recipes, module=""):
    "Keyword arguments of a cheap valid call, or None when the generator has none."
    try: sig = inspect.signature(func)
    except (TypeError, ValueError): return None
    if f"{module}.{name}" in recipes: kw = dict(recipes[f"{module}.{name}"])
    elif name in recipes: kw = dict(recipes[name])
    else: kw = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in kw: continue
        if p.default is p.empty:
            if p.name not in BY_NAME: return None
            kw[p.name] = _value(BY_NAME[p.name], F)
        elif p.name == "progress" and isinstance(p.default, bool): kw[p.name] = False   # no progress bars in the test log
        elif p.name in ("n_mc", "n_test", "trials", "n", "D", "max_iter", "n_iter", "restarts", "n_rand", "n_inner") and p.name in BY_NAME:
            pass   # keep the defaults of optional sizes unless the recipe set them
    return kw

# ---------------------------------------------------------------------------------------------------------------
# Running the cases: one warm worker per function (forked from the parent that built the fixtures; it makes the
# baseline call, which also fills the function's caches), and from it one forked child per case under the caps.
# ---------------------------------------------------------------------------------------------------------------
def _leaves(obj, key="", depth=0):
    if depth > 5: return
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj): yield from _leaves(getattr(obj, f.name), f.name, depth + 1)
    elif isinstance(obj, dict):
        for k, v in obj.items(): yield from _leaves(v, str(k), depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj[:10_000]: yield from _leaves(v, key, depth + 1)
    elif isinstance(obj, np.ndarray) and obj.dtype.kind in "fc":
        if obj.size and not np.all(np.isfinite(obj)): yield key, float("nan")
    elif isinstance(obj, (float, complex, np.floating, np.complexfloating)): yield key, complex(obj)

def _documented(fname, key):
    return key.endswith(DOCUMENTED_NONFINITE["*"]) or key in DOCUMENTED_NONFINITE.get(fname, ())

def _names(msg, param):
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9])", msg) is not None

def classify(fname, param, call):
    "Run `call` and classify its outcome (in the child)."
    from attnstat.core import ConvergenceError
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call()
    except ConvergenceError as e: return "converged", str(e)[:200]
    except MemoryError as e: return "raw", f"MemoryError: {str(e)[:200]}"
    except (ValueError, TypeError, FileNotFoundError) as e:
        msg = str(e)
        return ("named" if _names(msg, param) else "unnamed"), f"{type(e).__name__}: {msg[:300]}"
    except Exception as e: return "raw", f"{type(e).__name__}: {str(e)[:300]}"
    bad = [k for k, v in _leaves(out) if not np.isfinite(v) and not _documented(fname, k)]
    if bad: return "nonfinite", f"non-finite in {sorted(set(bad))[:5]}"
    return "finite", ""

class _CaseTimeout(BaseException):
    "Raised in a case by the CPU-time timer (a BaseException: `classify` must not catch it)."

def _on_timer(signum, frame): raise _CaseTimeout()

def _kill_group(pid):
    with contextlib.suppress(OSError): os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError, OSError): os.waitpid(pid, 0)

def _one_case(name, func, kw, param, value, hard):
    "One case in the worker, in-process: the caps on, the call classified, the caps off; returns (outcome, detail, cpu)."
    import copy
    try: args = copy.deepcopy(kw)         # a call that changes its arguments in place cannot touch the next case
    except Exception: args = dict(kw)
    try: args[param] = copy.deepcopy(value)
    except Exception: args[param] = value
    os.chdir(tempfile.mkdtemp(prefix="case-", dir=WORKDIR))   # a case that writes files (a sweep path) writes there
    t0 = time.process_time()
    try:
        resource.setrlimit(resource.RLIMIT_AS, (CAP_AS, hard))
        signal.setitimer(signal.ITIMER_PROF, CAP_S)
        try: outcome, detail = classify(name, param, lambda: func(**args))
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    except _CaseTimeout: outcome, detail = "timeout", f"ran past {CAP_S} s of CPU"
    except BaseException as e: outcome, detail = "raw", f"harness: {type(e).__name__}: {str(e)[:200]}"
    return outcome, detail, time.process_time() - t0

def _worker(name, func, kw, cases, start, out_fd):
    """In the per-function worker (its own process group): the baseline call, then the cases from `start` in-process,
    each under a CPU-time timer (ITIMER_PROF) and the address-space cap; it ends after a timeout (the state a timer
    interrupts is not trusted), and the parent starts a fresh worker for the rest."""
    global WORKDIR
    os.setpgid(0, 0)
    WORKDIR = tempfile.mkdtemp(prefix=f"attnstat-mutation-{name}-")
    # a path given as an integer is a file descriptor to os.chmod/open: fd 0 of the worker is a private
    # file, never the machine's /dev/null (an fchmod through it once made /dev/null 0644)
    os.dup2(os.open(os.path.join(WORKDIR, "stdin"), os.O_RDWR | os.O_CREAT, 0o600), 0)
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    signal.signal(signal.SIGPROF, _on_timer)
    def emit(obj): os.write(out_fd, (json.dumps(obj) + "\n").encode())
    t0 = time.process_time()
    base = _one_case(name, lambda **k: func(**kw), {}, "_", None, hard)[:2]
    emit({"baseline": list(base), "seconds": time.process_time() - t0})
    if base[0] in ("finite", "converged"):
        for i in range(start, len(cases)):
            param, label, value = cases[i]
            outcome, detail, cpu = _one_case(name, func, kw, param, value, hard)
            emit({"i": i, "outcome": outcome, "detail": detail, "cpu": cpu})
            if outcome == "timeout": break

def _start_worker(name, func, kw, cases, start):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        import shutil
        try: _worker(name, func, kw, cases, start, w)
        except BaseException: pass
        finally:
            with contextlib.suppress(Exception): shutil.rmtree(WORKDIR, ignore_errors=True)
            os._exit(0)
    os.close(w)
    with contextlib.suppress(OSError): os.setpgid(pid, pid)
    return pid, r

def run_function(name, func, kw, cases):
    """All `cases` [(param, label, value)] of one function, in warm workers forked from this process; returns
    (baseline outcome, baseline CPU seconds, [(outcome, detail, cpu)] per case). A worker that stops answering for
    `WALL_S` (a call that waits, or C code the timer cannot interrupt) is killed: that case is a timeout; one that
    dies is a crash; either way a fresh worker takes the next case."""
    import select
    results, base, base_s, start = [None] * len(cases), None, 0.0, 0
    while True:
        pid, r = _start_worker(name, func, kw, cases, start)
        buf, last, got_head, i = b"", time.monotonic(), False, start
        while True:
            ready, _, _ = select.select([r], [], [], 1.0)
            if ready:
                chunk = os.read(r, 65536)
                if not chunk: break
                buf += chunk; last = time.monotonic()
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    x = json.loads(line)
                    if "baseline" in x:
                        got_head = True
                        if base is None: base, base_s = tuple(x["baseline"]), x["seconds"]
                    else:
                        results[x["i"]] = (x["outcome"], x["detail"], x["cpu"]); i = x["i"] + 1
            elif time.monotonic() - last > WALL_S * (3 if not got_head else 1):
                _kill_group(pid); os.close(r); pid = None
                if base is None: base = ("timeout", f"the baseline ran past {3 * WALL_S} s")
                elif i < len(cases): results[i] = ("timeout", f"no answer for {WALL_S} s of wall-clock time", 0.0); i += 1
                break
        if pid is not None:
            os.close(r); _kill_group(pid)
            if base is None: base = ("crash", "the worker died in the baseline")
            elif base[0] in ("finite", "converged") and i < len(cases) and results[i] is None and (i == start or results[i - 1][0] != "timeout"):
                results[i] = ("crash", "the worker died in this case", 0.0); i += 1
        if base[0] not in ("finite", "converged") or i >= len(cases): break
        start = i
    return base, base_s, [x if x is not None else ("crash", "not run", 0.0) for x in results]

# ---------------------------------------------------------------------------------------------------------------
def generate(F):
    "Every case: (module, name, callable, baseline kwargs, parameter, label, value); and the functions without baseline."
    recipes, cases, no_base = {**_recipes(F), **_recipes_more(F)}, [], []
    bad_models = _bad_models()
    for m, n, func in public_callables():
        kw = baseline(n, func, F, recipes, m)
        if kw is None: no_base.append((m, n, "no baseline value for a required parameter")); continue
        params = [p for p in inspect.signature(func).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        for p in params:
            muts = dict(MUTATIONS)
            if p.name == "model": muts.update(bad_models)
            for label, value in muts.items():
                cases.append((m, n, func, kw, p.name, label, value))
    return cases, no_base

@contextlib.contextmanager
def guarded_env():
    env = {**GUARDS, "ATTNSTAT_DATA": tempfile.mkdtemp(prefix="attnstat-mutation-data-")}   # the store writes there
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try: yield
    finally:
        for k, v in old.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v

def select_cases(cases, sample=None, seed=SEED, shard=None):
    """The whole set, a fixed-seed sample of about `sample` cases (a case is in it by its own identity, so the sample is
    stable when functions are added), or shard `i` of `k` (`shard=(i, k)`: the shards partition the whole set)."""
    import zlib
    ident = lambda c: zlib.crc32(f"{c[0]}.{c[1]}.{c[4]}.{c[5]}".encode())
    if shard is not None:
        i, k = shard
        return [c for c in cases if ident(c) % k == i]
    if sample is not None and sample < len(cases):
        k = max(1, round(17_000 / sample))   # fixed stride (not total // sample): the same cases as functions are added
        return [c for c in cases if ident(c) % k == seed % k]
    return cases

def run(sample=None, seed=SEED, verbose=False, shard=None, only=None, start_at=None):
    "Run the cases (all, a fixed-seed sample or a shard); return counts per outcome, failures and the baseline report."
    from collections import Counter, defaultdict
    tmp = Path(tempfile.mkdtemp(prefix="attnstat-mutation-"))
    t0, cpu0 = time.perf_counter(), _children_cpu()
    with guarded_env():
        F = _fixtures(tmp)
        allcases, no_base = generate(F)
        if only: allcases = [c for c in allcases if c[1] in only]
        if start_at:   # resume a run at a function (in the order of public_callables)
            order = list(dict.fromkeys(c[1] for c in allcases))
            allcases = [c for c in allcases if order.index(c[1]) >= order.index(start_at)]
        cases = select_cases(allcases, sample, seed, shard)
        by_func = defaultdict(list)
        for c in allcases: by_func.setdefault((c[0], c[1]), [])
        for c in cases: by_func[(c[0], c[1])].append(c)
        counts, failures, base_fail, per_func = Counter(), [], [], {}
        homes = {m: defining_modules(m) for m in MODULES}   # failures are named by the module that defines them
        for (m, n), cs in by_func.items():
            func, kw = next(c[2:4] for c in allcases if (c[0], c[1]) == (m, n))
            tf = time.perf_counter()
            base, base_s, results = run_function(n, func, kw, [(c[4], c[5], c[6]) for c in cs])
            if base[0] not in ("finite", "converged"):
                base_fail.append((m, n, f"{base[0]}: {base[1]}")); continue
            per_func[f"{m}.{n}"] = dict(cases=len(cs), baseline_s=base_s, cpu=sum(x[2] for x in results),
                                        wall=time.perf_counter() - tf)
            if verbose: print(f"{m}.{n}: {len(cs)} cases, {per_func[f'{m}.{n}']['wall']:.1f} s", file=sys.stderr, flush=True)
            for c, (outcome, detail, cpu) in zip(cs, results):
                counts[outcome] += 1
                if outcome not in ("named", "converged", "finite"):
                    failures.append(f"{homes[m].get(n, m)}.{n}({c[4]}={c[5]}): {outcome}: {detail}")
                    if verbose: print("FAIL", failures[-1], file=sys.stderr, flush=True)
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
        ran = sum(1 for c in cases if f"{c[0]}.{c[1]}" in per_func)
        total = sum(1 for c in allcases if f"{c[0]}.{c[1]}" in per_func)
    return dict(counts=dict(counts), failures=failures, cases=ran, total=total, seconds=time.perf_counter() - t0,
                cpu=_children_cpu() - cpu0, functions=len(per_func), no_baseline=no_base + base_fail, per_func=per_func)

def _children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime

def _report(res, costs=0):
    print(f"\nmutation cases run: {res['cases']} of {res['total']} over {res['functions']} functions, "
          f"{res['seconds']:.1f} s wall-clock, {res['cpu']:.1f} s CPU")
    print("outcomes:", json.dumps(res["counts"], sort_keys=True))
    print(f"functions without a working baseline ({len(res['no_baseline'])}):")
    for m, n, why in res["no_baseline"]: print(f"  {m}.{n}: {why[:160]}")
    if costs:
        print(f"the {costs} costliest functions (CPU s of their cases, baseline s, cases):")
        for k, v in sorted(res["per_func"].items(), key=lambda kv: -max(kv[1]["cpu"], kv[1]["baseline_s"]))[:costs]:
            print(f"  {k}: {v['cpu']:.2f} s, baseline {v['baseline_s']:.3f} s, {v['cases']} cases")
    for f in res["failures"]: print("FAIL", f)

FAILING = ("unnamed", "raw", "nonfinite", "timeout", "crash")

def _check(res):
    "Every function has a working baseline and no case fails (strict: zero unnamed, raw, nonfinite, timeout, crash)."
    assert res["functions"] >= 180, res["functions"]
    assert not res["no_baseline"], res["no_baseline"]
    assert not res["failures"], "\n".join(res["failures"][:80])

def test_mutation_shard():
    "One shard of the whole set (MUTATION_SHARD, default 0/8): every function, about 1/8 of its cases; no failure allowed."
    i, k = (int(x) for x in SHARD.split("/"))
    null = os.stat(os.devnull).st_mode
    res = run(shard=(i, k))
    assert os.stat(os.devnull).st_mode == null, "a case changed the mode of /dev/null"
    _report(res, costs=5)
    _check(res)

@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MUTATION_FULL") == "0", reason="MUTATION_FULL=0: the whole set is deselected")
def test_mutation_full():
    "Every case of the mutation set; no failure allowed."
    res = run()
    _report(res, costs=10)
    _check(res)

# ---------------------------------------------------------------------------------------------------------------
# The rest of the entry contract (issue 28): one object per public name, a user's exception passed through untouched,
# warnings that point at the caller, and the two raw exceptions the issue found now named.
# ---------------------------------------------------------------------------------------------------------------
def test_one_object_per_name():
    "Every public name is one object, reached through its package or through the module that defines it."
    checked = 0
    for m in MODULES:
        mod, homes = importlib.import_module(m), defining_modules(m)
        assert set(homes) == set(mod.__all__), (m, set(homes) ^ set(mod.__all__))
        for n, home in homes.items():
            assert getattr(mod, n) is getattr(importlib.import_module(home), n), f"{m}.{n} is not {home}.{n}"
            checked += 1
    assert checked > 150, checked
    import attnstat.slr, attnstat.slr.replica
    assert attnstat.slr.replica_erm is attnstat.slr.replica.replica_erm

def _raiser(error):
    "A user callable (of any arity) that raises `error`."
    def f(*args, **kwargs): raise error
    return f

def test_user_errors_pass_through():
    "A user callable's own exception reaches the caller as it was raised: the same object, its own message."
    from attnstat.gaussian import gauss_expect, gauss_expect_2d, quad_expect
    from attnstat.fixed_point import fixed_point, continuation
    for error in (ValueError("boom"), TypeError("boom"), ZeroDivisionError("boom"), KeyError("boom")):
        f = _raiser(error)
        calls = {"attnstat.gaussian.gauss_expect": lambda: gauss_expect(f, 0.0, 1.0),
                 "gauss_expect (arrays)": lambda: gauss_expect(f, np.zeros(3), np.ones(3)),
                 "attnstat.gaussian.gauss_expect_2d": lambda: gauss_expect_2d(f, (0.0, 0.0), np.eye(2)),
                 "attnstat.gaussian.quad_expect": lambda: quad_expect(f, 0.0, 1.0),
                 "attnstat.fixed_point.fixed_point": lambda: fixed_point(f, 0.5),
                 "attnstat.fixed_point.continuation": lambda: continuation(f, [0.1, 0.2], 0.5)}
        for where, call in calls.items():
            with pytest.raises(type(error)) as got: call()
            assert got.value is error, (where, got.value)
            assert str(got.value) == str(error) and got.value.__cause__ is None, where

def test_warnings_point_at_the_caller():
    "A solver's warning names the line that called it (stacklevel), not a line inside attnstat."
    from attnstat.core import ConvergenceWarning
    from attnstat.fixed_point import fixed_point, continuation
    from attnstat.gaussian import gauss_expect, QuadratureWarning
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = fixed_point(lambda x: x + 1.0, 0.0, max_iter=5, on_fail="warn")              # never converges
        path = continuation(lambda x, a: x + a, [0.1, 0.2], 0.0, max_iter=5, on_fail="warn")
        gauss_expect(lambda x: np.abs(x) ** 0.5, 0.0, 1.0, n=4, check=True)                # a kink: orders disagree
    assert not res.converged and not any(r.converged for r in path)
    ours = [x for x in w if issubclass(x.category, (ConvergenceWarning, QuadratureWarning))]
    assert {x.category for x in ours} == {ConvergenceWarning, QuadratureWarning}, [str(x.message) for x in w]
    assert all(x.filename == __file__ for x in ours), [(x.category.__name__, x.filename, x.lineno) for x in ours]

def test_issue_28_raw_exceptions_are_named():
    "The two raw exceptions of issue 28, called through the defining modules, are named ValueError/TypeError."
    from attnstat.slr.population import bayes_risk_L2
    from attnstat.slr.bayes import nishimori_sample
    with pytest.raises(ValueError) as got: bayes_risk_L2(2.0, noise=1e300)
    assert _names(str(got.value), "noise"), str(got.value)
    with pytest.raises(TypeError) as got: nishimori_sample(None, 10)
    assert _names(str(got.value), "model"), str(got.value)

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true"); ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--n", type=int, default=SAMPLE); ap.add_argument("--shard", help="i/k: shard i of k of the whole set")
    ap.add_argument("--only", nargs="*", help="function names"); ap.add_argument("--costs", type=int, default=15)
    ap.add_argument("--start-at", help="resume the whole set at this function")
    a = ap.parse_args()
    shard = tuple(int(x) for x in a.shard.split("/")) if a.shard else None
    _report(run(sample=None if a.full or shard or a.only or a.start_at else a.n, seed=a.seed, shard=shard,
                only=set(a.only) if a.only else None, verbose=True, start_at=a.start_at), a.costs)
