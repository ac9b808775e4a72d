"""simulate_erm at the paper's size sqrt(N D) = 10^4: D = N = 10^4 (alpha = 1), spiked-SLR L = 3, nu = 1, softmax, float32.

Prints the wall time and the peak resident memory (the targets: under 10 minutes and 12 GiB)."""
import resource, sys, time
import numpy as np
from attnstat.slr import SpikedSLR
from attnstat.slr.simulate import simulate_erm

if __name__ == "__main__":
    D = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    t0 = time.perf_counter()
    r = simulate_erm(SpikedSLR(3, 1.0), "softmax", 1.0, 0.1, D, seed=0, dtype=np.float32, batch=2000, n_test=10_000, threads=None)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # KiB -> GiB on Linux
    print(f"D = N = {D}: wall {wall:.1f} s (L-BFGS {r.seconds:.1f} s, {r.n_iter} iterations, converged={r.converged}), "
          f"peak memory {peak:.2f} GiB")
    print(f"test error {r.test_error:.4f} ± {r.test_error_se:.4f}, train loss {r.train_loss:.4f}, overlaps "
          + ", ".join(f"{k}={v:.4f}" for k, v in r.overlaps.items()))
