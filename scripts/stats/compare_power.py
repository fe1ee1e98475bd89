#!/usr/bin/env python3
"""Repetitions per side that `scalebench compare --fail-if-slower` needs (docs/statistics.md).

The gate fails a cell when Welch's t on the log ratio of the runs' mean epoch times gives
p < alpha (two-sided) and the observed slowdown is at least max(PCT, --threshold). With n runs a
side and run-to-run coefficient of variation CV (taken as the s.d. of log epoch time), the log
ratio's estimate is normal with mean log(1 + slowdown) and s.e. CV * sqrt(2 / n); its t has
2n - 2 degrees of freedom (Welch's d.f. for equal n and variances). The power is computed
exactly for that model by integrating over the chi-square of the variance estimate (no
simulation, no SciPy): P(t > t_crit and estimate >= log(1 + max(PCT, threshold))).

Usage: python3 scripts/stats/compare_power.py   (prints the Markdown table in the docs)
"""
import math

ALPHA = 0.05
POWER = 0.80
THRESHOLD = 0.02  # compare's default --threshold


def chi2_pdf(v, nu):
    if v <= 0:
        return 0.0
    return math.exp((nu / 2 - 1) * math.log(v) - v / 2 - (nu / 2) * math.log(2) - math.lgamma(nu / 2))


def norm_sf(x):
    return 0.5 * math.erfc(x / math.sqrt(2))


def integrate(f, nu, steps=4000):
    # Simpson's rule over the chi-square's bulk (mean nu, s.d. sqrt(2 nu)).
    hi = nu + 40 * math.sqrt(2 * nu) + 40
    h = hi / steps
    total = f(0.0) * chi2_pdf(0.0, nu) + f(hi) * chi2_pdf(hi, nu)
    for i in range(1, steps):
        v = i * h
        total += (4 if i % 2 else 2) * f(v) * chi2_pdf(v, nu)
    return total * h / 3


def t_sf(c, nu):
    """P(T > c) for Student's t with nu d.f."""
    return integrate(lambda v: norm_sf(c * math.sqrt(v / nu)), nu)


_crit = {}


def t_crit(nu, alpha=ALPHA):
    if (nu, alpha) in _crit:
        return _crit[(nu, alpha)]
    lo, hi = 0.0, 100.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if 2 * t_sf(mid, nu) > alpha:
            lo = mid
        else:
            hi = mid
    _crit[(nu, alpha)] = (lo + hi) / 2
    return _crit[(nu, alpha)]


def gate_power(n, cv, slowdown, pct):
    nu = 2 * n - 2
    se = cv * math.sqrt(2 / n)
    delta = math.log1p(slowdown)
    k = math.log1p(max(pct, THRESHOLD))
    c = t_crit(nu)
    # estimate = delta + se * Z; s = se * sqrt(V / nu); fail when estimate / s > c, estimate >= k.
    return integrate(
        lambda v: norm_sf(max(c * math.sqrt(v / nu) - delta / se, (k - delta) / se)), nu)


def runs_needed(cv, slowdown, pct, limit=200):
    for n in range(2, limit + 1):  # runs a side

        if gate_power(n, cv, slowdown, pct) >= POWER:
            return n
    return None


def main():
    slowdowns = [0.05, 0.10, 0.20]
    cvs = [0.01, 0.02, 0.05]
    print("| run-to-run CV | " + " | ".join(f"{s:.0%} slower" for s in slowdowns) + " |")
    print("| --- | " + " | ".join("---" for _ in slowdowns) + " |")
    for cv in cvs:
        cells = [str(runs_needed(cv, s, s / 2)) for s in slowdowns]
        print(f"| {cv:.0%} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
