#!/usr/bin/env python3
"""A prototype of peak search and multichannel sampling beside a VEGAS map.

One run (integrate()):

1. Search before the warm-up: a scrambled Sobol set of `SOBOL_STARTS`
   points is evaluated, and local ascents of log f (L-BFGS-B, central
   finite differences, inside the cube) start from some of them (3.).
2. Warm-up: `skip` iterations of the VEGAS map alone (vegas's AdaptiveMap,
   trained on (f J)^2 as vegas does, alpha 0.5), not kept.  Ascents start
   from each warm-up iteration's samples (3.).
3. Starts are the points whose f the found modes' Laplace approximations
   explain least (residual above log 4); an ascent ending within one
   Mahalanobis unit of a known mode is that mode, and then the residual
   log(f - A) is climbed from the same start.  A new mode gets its
   curvature (the finite-difference Hessian H of -log f) and a channel, a
   Student-t (nu = 5) at the mode with scale H^-1, if it carries at least
   MIN_MASS of the largest mode's Laplace mass.
4. With two or more modes the rest of the run samples the mixture
   g = a_0 g_map + sum_c a_c g_c + a_u (uniform, a_u = 0.02 fixed), each
   channel its share of the iteration's points (counts fixed before the
   iteration, so the estimate (1/n) sum f/g is unbiased and its variance
   is the sum of the channels' stratum variances); the map is frozen.  The
   shares adapt after every iteration as Kleiss and Pittau's
   a_c <- a_c sqrt(W_c), W_c = E_g[g_c f^2 / g^3], with a floor that gives
   every mode channel at least `n_min` points.  Ascents also start from
   each iteration's largest weights; a new mode adds a channel and restarts
   the average (the iterations before it did not sample that mode).
   With one mode the run is the map alone, as in classic VEGAS.
5. Every iteration after the warm-up is kept (shares set before an
   iteration keep it unbiased).  A claim needs strata's rule (two kept,
   Q >= 0.01, sigma <= epsrel |I|), every mode channel at >= n_min points
   and the PSIS tail diagnostic k-hat of every kept iteration's weights
   below min(1 - 1/log10 S, 0.7) (S points), map-only iterations included
   (GATE = "channels" judges k-hat only once the run has channels).

Evaluations of the search are counted apart (`search_evals`) and in
`neval_total`.
"""
import math

import numpy as np
from scipy import optimize, special
from scipy.stats import qmc

import family
from baseline import MIN_Q, SKIP, running_average

SOBOL_STARTS = 1024
SOBOL_ASCENTS = 8           # at most this many ascents from the Sobol set
ASCENTS_PER_ITERATION = 4   # and from each iteration's samples
RESIDUAL = math.log(4.0)    # f above 4 times the known modes' approximation: a start
MIN_MASS = 1e-3             # a mode's Laplace mass, at least this share of the largest's
MAX_MODES = 16
MAX_ASCENTS = 32
TRIED_RADIUS = 0.1          # no start this close to one that found nothing
NU = 5.0                    # Student-t degrees of freedom of a mode channel
UNIFORM_SHARE = 0.02
KHAT_OVER = "kept"          # k-hat judged in every kept iteration, or "last"
GATE = "always"             # the gate on every run the search ran in, or "channels":
                            # only from the iteration on which the run has channels,
                            # or "unexplained": there, and where the largest weights
                            # include a point the modes found do not explain
H_STEP = 1e-4               # finite-difference step of the ascent and Hessian


def khat(w):
    """Pareto k-hat of the upper tail of weights w (Vehtari, Simpson, Gelman,
    Yao and Gabry, 'Pareto smoothed importance sampling', 2015/2022): a
    generalized Pareto fit (Zhang and Stephens 2009, with PSIS's weakly
    informative prior on k) to the M = min(S/5, 3 sqrt S) largest weights'
    exceedances of the next one."""
    w = np.sort(np.asarray(w, float))
    s = len(w)
    m = int(math.ceil(min(0.2 * s, 3 * math.sqrt(s))))
    if m < 5 or w[-1] <= 0:
        return float("nan")
    x = w[-m:] - w[-m - 1]
    if x[-1] <= 0:
        return float("-inf")
    n = len(x)
    mq = 30 + int(math.sqrt(n))
    b = 1 - np.sqrt(mq / (np.arange(1, mq + 1) - 0.5))
    b /= 3 * x[int(n / 4 + 0.5) - 1] if x[int(n / 4 + 0.5) - 1] > 0 else 3 * x[x > 0][0]
    b += 1 / x[-1]
    k = np.log1p(-b[:, None] * x).mean(axis=1)
    ll = n * (np.log(-b / k) - k - 1)
    wt = 1 / np.exp(ll - ll[:, None]).sum(axis=1)
    wt /= wt.sum()
    bp = float(np.sum(b * wt))
    kp = float(np.log1p(-bp * x).mean())
    return (n * kp + 10 * 0.5) / (n + 10)


def khat_limit(s):
    return min(1 - 1 / math.log10(s), 0.7)


class Counted:
    """log f with a count of evaluations."""

    def __init__(self, density):
        self.density = density
        self.n = 0

    def log(self, x):
        """log of f as a user's code computes it: 0 where f underflows."""
        x = np.atleast_2d(x)
        self.n += len(x)
        with np.errstate(divide="ignore"):
            return np.log(np.exp(self.density.log(x)))


class Mode:
    def __init__(self, x, logf, hess):
        self.x, self.logf = x, logf
        lam, v = np.linalg.eigh(0.5 * (hess + hess.T))
        lam = np.clip(lam, 16.0, None)        # sd at most 0.25 along any direction
        self.hess = (v * lam) @ v.T
        self.chol = np.linalg.cholesky(np.linalg.inv(self.hess))   # scale Sigma = L L^T
        self.u = np.linalg.inv(self.chol)
        d = len(x)
        self.lognorm = (special.gammaln((NU + d) / 2) - special.gammaln(NU / 2)
                        - 0.5 * d * math.log(NU * math.pi) - float(np.sum(np.log(np.diag(self.chol)))))
        # log of the Laplace approximation's mass, f(m) (2 pi)^(d/2) det(H)^(-1/2)
        self.logmass = logf + 0.5 * d * math.log(2 * math.pi) + float(np.sum(np.log(np.diag(self.chol))))

    def maha2(self, x):
        z = (np.atleast_2d(x) - self.x) @ self.u.T
        return np.einsum("ij,ij->i", z, z)

    def logpdf(self, x):
        d = len(self.x)
        return self.lognorm - 0.5 * (NU + d) * np.log1p(self.maha2(x) / NU)

    def sample(self, rng, n):
        z = rng.standard_normal((n, len(self.x)))
        s = np.sqrt(NU / rng.chisquare(NU, n))
        return self.x + (z @ self.chol.T) * s[:, None]


def hessian(logt, x):
    """Finite-difference Hessian of -logt at x, in one batch of 1 + 2d^2 points."""
    d = len(x)
    h = H_STEP
    e = np.eye(d) * h
    pts = [x]
    for i in range(d):
        pts += [x + e[i], x - e[i]]
    for i in range(d):
        for j in range(i):
            pts += [x + e[i] + e[j], x + e[i] - e[j], x - e[i] + e[j], x - e[i] - e[j]]
    v = -logt(np.array(pts))
    hs = np.empty((d, d))
    t = 1 + 2 * d
    for i in range(d):
        hs[i, i] = (v[1 + 2 * i] + v[2 + 2 * i] - 2 * v[0]) / h**2
        for j in range(i):
            hs[i, j] = hs[j, i] = (v[t] - v[t + 1] - v[t + 2] + v[t + 3]) / (4 * h**2)
            t += 4
    return hs


class Search:
    """Local ascents of log f and the modes they found."""

    def __init__(self, lf, d, known=()):
        self.lf, self.d = lf, d
        self.modes = []
        self.evals = 0
        self.ascents = 0
        self.tried = []
        for x in known:
            x = np.atleast_2d(np.asarray(x, float))
            self.from_points(x, self.lf.log(x), 1)

    def explained(self, x):
        """log of the known modes' Laplace approximation sum_j f_j exp(-q_j/2) at x."""
        x = np.atleast_2d(x)
        if not self.modes:
            return np.full(len(x), -np.inf)
        return np.logaddexp.reduce(np.array([m.logf - 0.5 * m.maha2(x) for m in self.modes]), axis=0)

    def residual_log(self, x):
        """log(f - A): f less the known modes' approximation A (-inf where
        A explains all of f).  Its maxima are the components that a mode
        found so far hides, such as a broad peak whose centre lies on the
        flank of a narrow one and so is no mode of f."""
        modes = list(self.modes)

        def lres(y):
            y = np.atleast_2d(y)
            lf = self.lf.log(y)
            la = np.logaddexp.reduce(np.array([m.logf - 0.5 * m.maha2(y) for m in modes]), axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(lf > la, lf + np.log1p(-np.exp(la - lf)), -np.inf)
        return lres

    def climb(self, logt, x0):
        """L-BFGS-B on -logt from x0 inside the cube: the end point and logt there."""
        def phi(x):      # where the target vanishes, a wall the line search backs off from
            return min(-logt(x)[0], 1e6)

        def grad(x):
            e = np.eye(self.d) * H_STEP
            v = np.minimum(-logt(np.concatenate([x + e, x - e])), 1e6)
            return (v[: self.d] - v[self.d:]) / (2 * H_STEP)

        r = optimize.minimize(phi, x0, jac=grad, method="L-BFGS-B",
                              bounds=[(0.0, 1.0)] * self.d, options=dict(maxiter=60))
        return np.clip(r.x, 0.0, 1.0), -r.fun

    def ascend(self, x0):
        """An ascent of log f from x0; where it ends at a known mode, an
        ascent of the residual log(f - A) from x0.  True if either ends at
        a new component, which is then added to the modes."""
        n0 = self.lf.n
        self.ascents += 1
        new = False
        for logt in (self.lf.log, self.residual_log(x0)):
            x, top = self.climb(logt, x0)
            if top > -1e6 and not any(m.maha2(x)[0] <= 1.0 for m in self.modes):
                hs = hessian(logt, np.clip(x, H_STEP, 1 - H_STEP))
                if not np.all(np.isfinite(hs)):     # the target vanishes beside it: no peak
                    break
                mode = Mode(x, top, hs)
                if self.carries_mass(mode, logt is self.lf.log):
                    self.modes.append(mode)
                    new = True
                break
            if not self.modes:
                break
        self.evals += self.lf.n - n0
        return new

    def carries_mass(self, mode, of_f):
        """A new mode must carry at least MIN_MASS of the largest one's
        Laplace mass and not be another's own: a residual maximum only where
        the known modes explain less than half of f."""
        if len(self.modes) >= MAX_MODES:
            return False
        if self.modes and mode.logmass < max(m.logmass for m in self.modes) + math.log(MIN_MASS):
            return False
        if of_f:
            return True
        lf = self.lf.log(mode.x)[0]
        return bool(self.explained(mode.x)[0] < lf + math.log(0.5))

    def from_points(self, x, logf, most):
        """Ascents from the points whose f the known modes explain least
        (log f above log of their Laplace approximation by more than
        RESIDUAL), most unexplained first, at most `most` of them; the
        residuals are taken afresh after each new mode, and points within
        TRIED_RADIUS of a start that found nothing are passed over.  True
        if a new mode was found."""
        new = False
        ok = np.isfinite(logf)
        x, logf = x[ok], logf[ok]
        for _ in range(most):
            if len(x) == 0 or self.ascents >= MAX_ASCENTS:
                break
            r = logf - self.explained(x)
            for t in self.tried:     # near a start that found nothing: not again
                r[np.sum((x - t) ** 2, axis=1) < TRIED_RADIUS**2] = -np.inf
            i = int(np.argmax(r))
            if not r[i] > RESIDUAL:
                break
            found = self.ascend(x[i])
            if not found:
                self.tried.append(x[i])
            new |= found
            keep = np.arange(len(x)) != i
            x, logf = x[keep], logf[keep]
        return new


def unexplained_tail(search, x, logf, w):
    """Whether the points of the M largest weights (k-hat's tail) include one
    that the modes found so far do not explain (residual above RESIDUAL)."""
    m = int(math.ceil(min(0.2 * len(w), 3 * math.sqrt(len(w)))))
    top = np.argsort(w)[-m:]
    r = logf[top] - search.explained(x[top])
    return bool(np.any(np.isfinite(logf[top]) & (r > RESIDUAL)))


def integrate(inst, neval, epsrels=(1e-2,), seed=1, maxiter=30, skip=SKIP, known=(), channels=True,
              with_trace=False):
    """One run on an instance of the family; one result per epsrel (the
    sampling does not depend on epsrel; the run goes on to the smallest)."""
    import vegas
    d = inst["d"]
    rng = np.random.default_rng([0x9EA45, seed])
    lf = Counted(family.Density(inst))
    amap = vegas.AdaptiveMap(d * [[0.0, 1.0]], ninc=int(max(10, min(1000, neval // 10))))
    search = Search(lf, d, known)
    n_min = max(32, 4 * d)
    if channels:
        sob = qmc.Sobol(d, scramble=True, seed=rng).random(SOBOL_STARTS)
        search.evals += SOBOL_STARTS
        search.from_points(sob, lf.log(sob), SOBOL_ASCENTS)
    trace = []            # per iteration: I, sigma, evaluations so far, gate, restart
    alpha = None
    mixing = False
    for k in range(maxiter):
        if not mixing:
            y = rng.random((int(neval), d))
            x = np.empty_like(y)
            jac = np.empty(len(y))
            amap.map(y, x, jac)
            logf = lf.log(x)
            fx = np.exp(logf)
            w = fx * jac
            i_k = float(np.mean(w))
            s_k = float(np.std(w, ddof=1) / math.sqrt(len(w)))
            amap.add_training_data(y, w**2)
            amap.adapt(alpha=0.5)
            gate = dict(khat=khat(w), thin=False, unexplained=unexplained_tail(search, x, logf, w))
            restart = False
            if channels:
                search.from_points(x, logf, ASCENTS_PER_ITERATION)
                if k + 1 >= skip and len(search.modes) >= 2:
                    mixing = True
                    restart = k + 1 > skip      # map-only iterations were kept
                    alpha = np.full(len(search.modes) + 1, (1 - UNIFORM_SHARE) / (len(search.modes) + 1))
        else:
            nch = len(search.modes)
            counts = np.floor(alpha * neval).astype(int)
            counts[1:] = np.maximum(counts[1:], n_min)
            nu_ = max(1, int(neval) - int(counts.sum()))
            n = int(counts.sum()) + nu_
            share = np.append(counts, nu_) / n     # realised shares, used in g
            parts = []
            y = rng.random((counts[0], d))
            xm = np.empty_like(y)
            jm = np.empty(len(y))
            amap.map(y, xm, jm)
            parts.append(xm)
            for c, m in enumerate(search.modes):
                parts.append(m.sample(rng, counts[c + 1]))
            parts.append(rng.random((nu_, d)))
            x = np.concatenate(parts)
            label = np.repeat(np.arange(nch + 2), np.append(counts, nu_))
            inside = np.all((x >= 0) & (x <= 1), axis=1)
            g = np.zeros((nch + 2, n))
            yi = np.empty_like(x[inside])
            ji = np.empty(int(inside.sum()))
            amap.invmap(np.ascontiguousarray(x[inside]), yi, ji)
            g[0, inside] = 1 / ji
            for c, m in enumerate(search.modes):
                g[c + 1] = np.exp(m.logpdf(x))
            g[-1, inside] = 1.0
            gmix = share @ g
            logf = np.full(n, -np.inf)
            logf[inside] = lf.log(x[inside])
            fx = np.exp(logf)
            w = np.where(gmix > 0, fx / np.where(gmix > 0, gmix, 1), 0.0)
            i_k = float(np.mean(w))
            var = 0.0
            for c in range(nch + 2):
                wc = w[label == c]
                if len(wc) > 1:
                    var += (len(wc) / n) ** 2 * np.var(wc, ddof=1) / len(wc)
            s_k = math.sqrt(var)
            # Kleiss-Pittau: a_c <- a_c sqrt(W_c), W_c = E_g[g_c f^2/g^3]
            wc2 = (g[: nch + 1] * (w**2 / np.where(gmix > 0, gmix, 1))).mean(axis=1)
            a = share[: nch + 1] * np.sqrt(np.maximum(wc2, 0))
            if a.sum() > 0:
                alpha = (1 - UNIFORM_SHARE) * a / a.sum()
            gate = dict(khat=khat(w), thin=bool(np.any(counts[1:] < n_min)),
                        unexplained=unexplained_tail(search, x, logf, w))
            restart = search.from_points(x, logf, ASCENTS_PER_ITERATION)
            if restart:     # new channels start at the share of an average one
                new = len(search.modes) - nch
                alpha = np.append(alpha, np.full(new, alpha.sum() / (nch + 1)))
                alpha *= (1 - UNIFORM_SHARE) / alpha.sum()
        trace.append(dict(i=i_k, s=s_k, evals=lf.n, restart=restart, size=len(w),
                          gated=channels and (GATE == "always" or mixing
                                              or (GATE == "unexplained" and gate["unexplained"])),
                          **gate))
        if _verdict(trace, min(epsrels), skip)["converged"]:
            break
    out = []
    for e in epsrels:
        v = _verdict(trace, e, skip)
        v.update(search_evals=search.evals, modes=len(search.modes), ascents=search.ascents,
                 modes_list=[dict(x=m.x.round(4).tolist(), logf=round(float(m.logf), 3)) for m in search.modes])
        v["trace"] = trace if with_trace else [
            [round(t["i"], 8), round(t["s"], 8), round(t["khat"], 3), int(t["restart"]), t["size"],
             int(t["gated"])] for t in trace]
        out.append(v)
    return out


def _verdict(trace, epsrel, skip, khat_over=None):
    """strata's stopping rule over the kept iterations and, where the
    iteration is gated (GATE), the channels' minimum and k-hat in every
    kept iteration (khat_over="last": in the latest only)."""
    khat_over = khat_over or KHAT_OVER
    kept, conv, reason = [], False, "maxiter"
    for k, t in enumerate(trace):
        if t["restart"]:
            kept = []
        elif k >= skip and t["s"] > 0:
            kept.append(t)
        if len(kept) >= 2:
            mean, sdev, q = running_average([(u["i"], u["s"]) for u in kept])
            judged = kept if khat_over == "kept" else kept[-1:]
            worst = max(judged, key=lambda u: u["khat"] - khat_limit(u["size"]))
            gated = t["gated"]
            if q >= MIN_Q and sdev <= epsrel * abs(mean):
                if gated and any(u["thin"] for u in judged):
                    reason = "a mode channel below its minimum"
                elif gated and not worst["khat"] <= khat_limit(worst["size"]):
                    reason = f"k-hat {worst['khat']:.2f}"
                else:
                    conv = True
                    break
    if kept:
        mean, sdev, _ = running_average([(u["i"], u["s"]) for u in kept])
    else:
        mean, sdev = trace[k]["i"], trace[k]["s"]
    return dict(integral=mean, sigma=sdev, converged=conv, neval_total=trace[k]["evals"],
                iterations=k + 1, khat=trace[k]["khat"], reason=None if conv else reason)
