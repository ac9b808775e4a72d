"""Physics identities of the zero-temperature RS free energy (the replica-theory chapter, nbs/02_slr_replica_theory).

At an RS fixed point solved on one Monte Carlo sample (common random numbers), for each activation:
- the energy identity e = lam_k q_k/2 + lam_v q_v/2 + alpha E[r^2/2] (free energy from its full formula, with E M_V from the prox);
- stationarity: every derivative of e in the six overlaps and six conjugates vanishes (central finite differences).
Both are exact at the fixed point; the tolerances come from the solver tolerance (atol 1e-9) and the finite-difference error.
"""
import math
import numpy as np
import pytest
from attnstat.slr.models import SpikedSLR
from attnstat.slr.replica import replica_erm, channel_sample, prox_newton

HATS = ("mhat_k", "qhat_k", "Vhat_k", "mhat_v", "qhat_v", "Vhat_v")

def _mean_envelope(act, x, S, chi0):
    m_k, q_k, V_k, m_v, q_v, V_v = x
    omk = (m_k * S.chi_star + math.sqrt(q_k - m_k**2) * S.xi_k) * S.mask
    omv = (m_v * S.z_star + math.sqrt(q_v - m_v**2) * S.xi_v) * S.mask
    return prox_newton(act, omk, omv, S.y, V_k, V_v, S.mask, x0=chi0, xtol=1e-13)[1].mean()

def _free_energy(act, p, S, alpha, lam, chi0):
    prior = sum(0.5 * qh * V - 0.5 * Vh * q + mh * m - 0.5 * (qh + mh**2) / (lam + Vh)
                for m, q, V, mh, qh, Vh in ((p[0], p[1], p[2], p[6], p[7], p[8]), (p[3], p[4], p[5], p[9], p[10], p[11])))
    return prior + alpha * _mean_envelope(act, p[:6], S, chi0)

@pytest.mark.parametrize("act", ["softmax", "linear", "erf", "softplus"])
def test_free_energy_identity_and_stationarity(act):
    model, alpha, lam = SpikedSLR(2, 2.0), 3.0, 0.1
    S = channel_sample(model, 1000, seed=3)
    r = replica_erm(model, act, alpha, lam, sample=S, options=dict(atol=1e-9))
    assert r.converged
    chi0 = r.chi[0] if isinstance(r.chi, (list, tuple)) else r.chi
    p0 = np.concatenate([r.x, [r.conjugates[k] for k in HATS]])
    e = _free_energy(act, p0, S, alpha, lam, chi0)
    assert abs(e - r.energy) < 1e-7, (e, r.energy)                   # exact at the fixed point, solved to 1e-9
    for i in range(12):
        h = 1e-5 * max(1.0, abs(p0[i])); dp = np.zeros(12); dp[i] = h
        d = (_free_energy(act, p0 + dp, S, alpha, lam, chi0) - _free_energy(act, p0 - dp, S, alpha, lam, chi0)) / (2 * h)
        assert abs(d) < 1e-6, (act, i, d)                            # FD error ~h^2 + 1e-16/h; terms cancelled are O(0.1-1)
