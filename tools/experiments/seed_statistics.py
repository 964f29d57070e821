"""The statistics over seeds of a results table (tools/experiments/results_table.py --seeds):
mean and sample standard deviation of the seeds' scores, Welch's t-test between two systems'
seed scores (the training-variance half of the combined test; the test-set half is
csan-score's paired bootstrap of each seed), and Holm-Bonferroni's adjustment across the rows
of one table. Only the standard library: Debian's python3 without scipy runs the table."""
import math


def mean(values):
    return sum(values) / len(values)


def sample_sd(values):
    """The standard deviation with n - 1 (0 for one value: no spread is known)."""
    if len(values) < 2:
        return 0.0
    m = mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def _incomplete_beta_fraction(a, b, x):
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result


def regularized_incomplete_beta(a, b, x):
    """I_x(a, b), for 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    # The fraction converges fast on the side of the mean a / (a + b); the other side by symmetry.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _incomplete_beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _incomplete_beta_fraction(b, a, 1.0 - x) / b


def student_t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df (not necessarily whole) degrees of freedom."""
    return regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def welch_t_test(a, b):
    """(t, df, two-sided p) of Welch's unequal-variance t-test between the samples a and b
    (each of at least 2 values). Equal samples without spread give p = 1; different means
    without spread, p = 0."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError("Welch's t-test needs at least two values on each side")
    va, vb = sample_sd(a) ** 2 / len(a), sample_sd(b) ** 2 / len(b)
    difference = mean(b) - mean(a)
    if va + vb == 0.0:
        return (0.0 if difference == 0.0 else math.copysign(math.inf, difference)), math.nan, \
            (1.0 if difference == 0.0 else 0.0)
    t = difference / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return t, df, student_t_two_sided_p(t, df)


def intersection_union_p(bootstrap_p_values, baseline_scores, system_scores):
    """The p-value of a difference that must hold both over test sets and over seeds: the
    largest of the seeds' paired-bootstrap p-values (None counts as 0) and Welch's p between
    the two systems' scores over seeds (each side at least 2 seeds)."""
    _, _, welch = welch_t_test(baseline_scores, system_scores)
    return max(max(p or 0.0 for p in bootstrap_p_values), welch)


def holm(p_values):
    """Holm-Bonferroni adjusted p-values, in the order given: the k-th smallest of m is
    multiplied by m - k + 1, made monotone (never below the adjusted value before it in
    sorted order) and capped at 1. None (no test) stays None and does not count in m."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted, running = list(p_values), 0.0
    for k, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - k) * p))
        adjusted[i] = running
    return adjusted
