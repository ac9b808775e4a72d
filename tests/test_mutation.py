"""Mutation test of the public API (issue 19): every public callable of attnstat.slr, attnstat.rmt, attnstat.gaussian,
attnstat.fixed_point, attnstat.sweep and attnstat.weights, every argument replaced in turn by a hostile value.

The cases are generated from the API itself (`__all__` and the signatures), so functions added later (the dynamics,
positional and multi-head modules) join automatically. Each function first gets a cheap *baseline* call (argument
values by parameter name, with recipes for the few functions that need built objects); the baseline must succeed. Then
each argument in turn is replaced by a value of the mutation set, and the call runs in a forked child under a wall-clock
cap (`CAP_S`) and an address-space cap (`resource.setrlimit(RLIMIT_AS)`), with the library's own guards set tighter
(`ATTNSTAT_MAX_MEMORY`, `ATTNSTAT_MAX_SECONDS`) so that they, not the caps, must stop what is too big. Each outcome is
one of
  named      a ValueError/TypeError (or FileNotFoundError) whose message names the mutated parameter
  converged  a ConvergenceError (the documented failure of a solver)
  finite     a result whose numbers are all finite (or non-finite only in documented fields)
and every other outcome fails the test: an error that names another parameter or none ("unnamed"), a raw exception
("raw": OverflowError, KeyError, ... ; MemoryError), an undocumented NaN/inf in the result ("nonfinite"), a run past
the cap ("timeout") or a child killed by the cap ("crash").

`test_mutation_sample` runs a fixed-seed sample (about 30-60 s on one core, in the normal suite);
`test_mutation_full` (marked slow) runs the whole set; `python tests/test_mutation.py [--full] [--seed S] [--n N]`
prints the counts per outcome and every failing case.
"""
import contextlib, dataclasses, importlib, inspect, json, math, os, pickle, random, re, resource, signal, sys, tempfile, time, warnings
from pathlib import Path
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))

MODULES = ("attnstat.slr", "attnstat.rmt", "attnstat.gaussian", "attnstat.fixed_point", "attnstat.sweep", "attnstat.weights")
CAP_S = 10                  # wall-clock cap per case (the library's ATTNSTAT_MAX_SECONDS below is 3 s)
CAP_AS = 6 * 2**30          # address-space cap per case (the library's ATTNSTAT_MAX_MEMORY below is 1 GiB)
GUARDS = {"ATTNSTAT_MAX_MEMORY": "1GiB", "ATTNSTAT_MAX_SECONDS": "3"}
SAMPLE = int(os.environ.get("MUTATION_SAMPLE", "200"))   # cases in the fast run (about 60 s on one loaded core)
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
    "kind": "bias", "t": [0.0, 1.0, 2.0], "t_max": 1.0, "eta": 0.1, "eta_hi": 1.0, "C": lambda F: np.eye(2) * 0.5,
}

def _recipes(F):
    "Baseline keyword arguments for functions that the by-name table cannot serve."
    from attnstat.rmt import aligned_vectors
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
        "replica_curve": dict(model=F["model"], activation="linear", alphas=[1.0, 2.0], lam=0.1, n_mc=256, progress=False),
        "label_branches": dict(rows=[]),
        "simulate_errors": dict(W=F["W"], f="tanh", mu=[1.0, 0, 0, 0], n=16, gammas=[1.0], trials=2),
        "fit_identity_low_rank": dict(W=F["W"], rank=1), "fplr_residuals": dict(W=F["W"], ranks=(0, 1)),
        "identity_cosine": dict(W=F["W"]), "effective_fplr": dict(W=F["W"]),
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
        "replica_erm": dict(model=F["model"], activation="linear", alpha=2.0, lam=0.1, n_mc=256, n_rand=2, diagnostics=False),
        "bayes_optimal_error": dict(model=F["model"], alpha=2.0, n_mc=400, n_blocks=0),
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

# Functions the generator does not call, with the reason (each is exercised by its notebook and test file).
SKIP = {
    "minilm_path": "no arguments; reads the installed package", "load_minilm": "reads the 90 MB checkpoint",
    "max_jobs": "no arguments", "run_panel": "writes a book panel (minutes)", "run_sign_maps": "writes a book data set",
    "simulate_points": "writes a book data set", "run_test_error_points": "writes a book data set",
    "register_activation": "mutates the global registry", "save_table": "writes files", "cached_table": "writes files",
    "random_start": "no required arguments", "load_panel": "reads a book data file", "load_points": "reads a book data file",
    "load_mh_panel": "reads a book data file", "load_nonsymmetric_check": "reads a book data file",
    "run_nonsymmetric_check": "writes a book data set", "run_mh_panel": "writes a book panel", "load_table": "reads a table file",
}
DOCUMENTED_NONFINITE = {   # function: fields (or '*' suffixes) where NaN/inf is documented
    "*": ("_se", "_sd", "err", "_err", "log_excess", "replicon", "jump_k", "jump_v"),
    "ridge_textbook": ("V",), "noise_fixed_point": ("trace",), "bbp_outlier": (), "free_entropy": (),
}

def public_callables():
    "(module, name, callable) for every public function or validated class of the modules (new ones join)."
    out = []
    for m in MODULES:
        mod = importlib.import_module(m)
        for n in mod.__all__:
            o = getattr(mod, n)
            if not callable(o) or n in SKIP: continue
            if inspect.isclass(o):
                if issubclass(o, (BaseException, list)): continue                  # exceptions, warnings, SweepRows
                if dataclasses.is_dataclass(o) and not hasattr(o, "__post_init__"): continue   # plain result records
            out.append((m, n, o))
    return out

def _value(v, F): return v(F) if callable(v) and not isinstance(v, type) and getattr(v, "__name__", "") == "<lambda>" else v

def baseline(name, func, F, recipes):
    "Keyword arguments of a cheap valid call, or None when the generator has none."
    try: sig = inspect.signature(func)
    except (TypeError, ValueError): return None
    if name in recipes: kw = dict(recipes[name])
    else: kw = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in kw: continue
        if p.default is p.empty:
            if p.name not in BY_NAME: return None
            kw[p.name] = _value(BY_NAME[p.name], F)
        elif p.name in ("n_mc", "n_test", "trials", "n", "D", "max_iter", "n_iter", "restarts", "n_rand", "n_inner") and p.name in BY_NAME:
            pass   # keep the defaults of optional sizes unless the recipe set them
    return kw

# ---------------------------------------------------------------------------------------------------------------
# One case in a forked child under the caps
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

def run_case(fname, func, kw, param, label, value, cap=CAP_S):
    "Fork a child that applies the caps, makes the call and sends back its outcome."
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # child
        os.close(r)
        try:
            os.chdir(tempfile.mkdtemp(prefix="attnstat-mutation-"))   # a case that writes files (a sweep path) writes there
            resource.setrlimit(resource.RLIMIT_AS, (CAP_AS, CAP_AS))
            signal.signal(signal.SIGALRM, signal.SIG_DFL); signal.alarm(cap + 2)
            args = dict(kw); args[param] = value
            res = classify(fname, param, lambda: func(**args))
        except BaseException as e: res = ("raw", f"harness: {type(e).__name__}: {e}")
        try: os.write(w, json.dumps(res).encode()[:60000])
        finally: os._exit(0)
    os.close(w)
    t0, data = time.monotonic(), b""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done: break
        if time.monotonic() - t0 > cap:
            os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0); os.close(r)
            return "timeout", f"ran past {cap} s"
        time.sleep(0.002)
    with os.fdopen(r, "rb") as fh: data = fh.read()
    if not data: return "crash", f"child ended with status {status}"
    return tuple(json.loads(data))

# ---------------------------------------------------------------------------------------------------------------
def generate(F):
    "Every case: (module, name, callable, baseline kwargs, parameter, label, value); and the functions without baseline."
    recipes, cases, no_base = _recipes(F), [], []
    bad_models = _bad_models()
    for m, n, func in public_callables():
        kw = baseline(n, func, F, recipes)
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
    old = {k: os.environ.get(k) for k in GUARDS}
    os.environ.update(GUARDS)
    try: yield
    finally:
        for k, v in old.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v

def run(sample=None, seed=SEED, verbose=False):
    "Run the cases (all, or a fixed-seed sample); return counts per outcome, failures and the baseline report."
    from collections import Counter
    tmp = Path(tempfile.mkdtemp(prefix="attnstat-mutation-"))
    with guarded_env():
        F = _fixtures(tmp)
        cases, no_base = generate(F)
        # baselines: one call each, in a child (a failing baseline is reported, its mutations skipped)
        base_fail, ok_funcs = [], set()
        for key in sorted({(c[0], c[1]) for c in cases}):
            m, n, func, kw = next(c[:4] for c in cases if (c[0], c[1]) == key)
            first = next(iter(kw), None)
            out = run_case(n, func, kw, first, "baseline", kw[first]) if first else run_case(n, lambda **k: func(), {}, "_", "baseline", None)
            if out[0] in ("finite",) or (out[0] == "converged"): ok_funcs.add(key)
            else: base_fail.append((m, n, f"{out[0]}: {out[1]}"))
        cases = [c for c in cases if (c[0], c[1]) in ok_funcs]
        total = len(cases)
        if sample is not None and sample < total:   # a case is in the sample by its own identity (stable when functions are added)
            import zlib
            k = max(1, round(17_000 / sample))   # fixed stride (not total // sample): the same cases as functions are added
            cases = [c for c in cases if zlib.crc32(f"{c[0]}.{c[1]}.{c[4]}.{c[5]}".encode()) % k == seed % k]
        counts, failures, t0 = Counter(), [], time.perf_counter()
        for m, n, func, kw, p, label, value in cases:
            outcome, detail = run_case(n, func, kw, p, label, value)
            counts[outcome] += 1
            if outcome not in ("named", "converged", "finite"):
                failures.append(f"{m}.{n}({p}={label}): {outcome}: {detail}")
                if verbose: print(failures[-1], flush=True)
    return dict(counts=dict(counts), failures=failures, cases=len(cases), total=total, seconds=time.perf_counter() - t0,
                functions=len(ok_funcs), no_baseline=no_base + base_fail)

def _report(res):
    print(f"\nmutation cases run: {res['cases']} of {res['total']} over {res['functions']} functions, {res['seconds']:.1f} s")
    print("outcomes:", json.dumps(res["counts"], sort_keys=True))
    print(f"functions without a working baseline ({len(res['no_baseline'])}):")
    for m, n, why in res["no_baseline"]: print(f"  {m}.{n}: {why[:160]}")
    for f in res["failures"]: print("FAIL", f)

FAILING = ("unnamed", "raw", "nonfinite", "timeout", "crash")

# The functions this round fixed (the list, and the modules of the sweep and the loader): no failure allowed.
# Failures elsewhere are printed with the counts and fail only with MUTATION_STRICT=1 (the open work of issue 19).
STRICT = {"expected_max_gaussian", "empirical_errors", "simulate_test_errors", "empirical_risk", "ridge_textbook", "free_entropy", "noise_fixed_point",
          "mp_stieltjes", "kernel_stieltjes", "gram_matrix", "mean_stderr", "bayes_risk_L2", "quad_expect",
          "variance_matched_activation", "summarise", "nishimori_sample", "kernel_density", "optimal_population_risk",
          "attention_theory", "read_weight", "load_attention_weights", "safetensors_header", "safetensors_files",
          "read_config", "run_sweep", "read_sweep", "point_key", "point_seed", "sweep_header", "row_key", "lock_path"}
STRICT_ALL = os.environ.get("MUTATION_STRICT") == "1"

def _strict(failures):
    return failures if STRICT_ALL else [f for f in failures if f.split("(")[0].rsplit(".", 1)[-1] in STRICT]

def test_mutation_sample():
    "A fixed-seed sample of the whole mutation set: zero raw exceptions, undocumented NaN/inf, timeouts (see STRICT)."
    res = run(sample=SAMPLE)
    _report(res)
    assert res["functions"] >= 100, res["functions"]
    bad = _strict(res["failures"])
    assert not bad, "\n".join(bad[:40])

@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MUTATION_FULL") != "1", reason="the whole set (~16 500 cases) takes about an hour on "
                    "one core, beyond the CI budget: run MUTATION_FULL=1 pytest -m slow tests/test_mutation.py")
def test_mutation_full():
    "Every case of the mutation set (about an hour on one core: deselected unless MUTATION_FULL=1)."
    res = run()
    _report(res)
    bad = _strict(res["failures"])
    assert not bad, "\n".join(bad[:80])

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true"); ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--n", type=int, default=SAMPLE)
    a = ap.parse_args()
    _report(run(sample=None if a.full else a.n, seed=a.seed, verbose=True))
