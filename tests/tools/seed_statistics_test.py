"""The statistics over seeds of tools/experiments/results_table.py (seed_statistics.py) and
the mean curve of tools/plot-curves' seeds, against numbers worked out by hand. Runs as
/usr/bin/python3, without scipy or matplotlib."""
import math
import os
import sys
import unittest

SOURCE_DIR = os.environ.get("CSAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SOURCE_DIR, "tools", "experiments"))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tools"))
import seed_statistics as stats  # noqa: E402
from plotting import figures  # noqa: E402  (matplotlib is imported only to draw)


class MeanAndSd(unittest.TestCase):
    def test_sample_sd_divides_by_n_minus_one(self):
        # 2, 4, 6: mean 4, squared deviations 4 + 0 + 4 = 8, / 2 = 4, sd 2.
        self.assertEqual(stats.mean([2.0, 4.0, 6.0]), 4.0)
        self.assertEqual(stats.sample_sd([2.0, 4.0, 6.0]), 2.0)
        self.assertEqual(stats.sample_sd([38.15]), 0.0)


class StudentT(unittest.TestCase):
    def test_one_degree_of_freedom_is_cauchy(self):
        # P(|T| >= t) = 1 - 2 atan(t) / pi: 0.5 at t = 1.
        self.assertAlmostEqual(stats.student_t_two_sided_p(1.0, 1.0), 0.5, places=12)
        self.assertAlmostEqual(stats.student_t_two_sided_p(2.0, 1.0), 1 - 2 * math.atan(2.0) / math.pi, places=12)

    def test_two_degrees_of_freedom_closed_form(self):
        # P(|T| >= t) = 1 - t / sqrt(2 + t^2): 1 - 1/sqrt(3) at t = 1.
        self.assertAlmostEqual(stats.student_t_two_sided_p(1.0, 2.0), 1 - 1 / math.sqrt(3), places=12)

    def test_large_df_approaches_the_normal(self):
        # 1.959964 is the normal's two-sided 5% point.
        self.assertAlmostEqual(stats.student_t_two_sided_p(1.959964, 1e7), 0.05, places=5)


class Welch(unittest.TestCase):
    def test_by_hand(self):
        # a = 1, 3 and b = 4, 6: means 2 and 5, variances 2 and 2, se = sqrt(2/2 + 2/2) = sqrt(2),
        # t = 3 / sqrt(2), df = (1 + 1)^2 / (1/1 + 1/1) = 2, p = 1 - t / sqrt(2 + t^2) = 1 - 3 / sqrt(13).
        t, df, p = stats.welch_t_test([1.0, 3.0], [4.0, 6.0])
        self.assertAlmostEqual(t, 3 / math.sqrt(2), places=12)
        self.assertAlmostEqual(df, 2.0, places=12)
        self.assertAlmostEqual(p, 1 - 3 / math.sqrt(13), places=12)

    def test_unequal_variances_give_fractional_df(self):
        # a = 0, 2 (variance 2), b = 0, 0, 6 (variance 12): va = 1, vb = 4, df = 25 / (1/1 + 16/2) = 25/9.
        t, df, _ = stats.welch_t_test([0.0, 2.0], [0.0, 0.0, 6.0])
        self.assertAlmostEqual(df, 25 / 9, places=12)
        self.assertAlmostEqual(t, 1 / math.sqrt(5), places=12)

    def test_no_spread(self):
        self.assertEqual(stats.welch_t_test([1.0, 1.0], [1.0, 1.0])[2], 1.0)
        self.assertEqual(stats.welch_t_test([1.0, 1.0], [2.0, 2.0])[2], 0.0)
        with self.assertRaises(ValueError):
            stats.welch_t_test([1.0], [2.0, 3.0])


class IntersectionUnion(unittest.TestCase):
    def test_the_larger_of_the_bootstrap_and_welch(self):
        a, b = [90.0, 91.0, 92.0], [94.0, 94.5, 95.0]
        welch = stats.welch_t_test(a, b)[2]
        self.assertLess(welch, 0.03)
        # A seed's bootstrap above Welch's p decides; None (no bootstrap) counts as 0.
        self.assertEqual(stats.intersection_union_p([0.01, None, 0.04], a, b), 0.04)
        self.assertEqual(stats.intersection_union_p([None, 1e-6], a, b), welch)
        # The seeds settle nothing: Welch's p decides however small the bootstraps.
        self.assertEqual(stats.intersection_union_p([0.001, 0.001], [90.0, 95.0], [91.0, 96.0]),
                         stats.welch_t_test([90.0, 95.0], [91.0, 96.0])[2])


class Holm(unittest.TestCase):
    def test_by_hand(self):
        # Sorted 0.01, 0.03, 0.04 of m = 3: 3 x 0.01 = 0.03, 2 x 0.03 = 0.06, 1 x 0.04 = 0.04 -> 0.06
        # (never below the one before); None is no test and does not count.
        self.assertEqual(stats.holm([0.01, 0.04, 0.03, None]), [0.03, 0.06, 0.06, None])
        self.assertEqual(stats.holm([0.6, 0.5]), [1.0, 1.0])  # capped at 1
        self.assertEqual(stats.holm([None, 0.02]), [None, 0.02])  # one test: unadjusted

    def test_monotone_in_the_raw_order(self):
        raw = [0.2, 0.001, 0.04, 0.03, 0.5]
        adjusted = stats.holm(raw)
        order = sorted(range(len(raw)), key=raw.__getitem__)
        self.assertEqual([adjusted[i] for i in order], sorted(adjusted))
        self.assertTrue(all(a >= r for a, r in zip(adjusted, raw)))


class MeanCurve(unittest.TestCase):
    def test_mean_at_the_common_updates(self):
        curves = [[(10, 4.0), (20, 3.0), (30, 2.0)], [(10, 6.0), (20, 5.0)]]
        self.assertEqual(figures.mean_curve(curves), [(10, 5.0), (20, 4.0)])
        self.assertEqual(figures.mean_curve([[(10, 1.0)], []]), [])

    def test_runs_of_one_label_are_one_system(self):
        class Run:
            def __init__(self, label):
                self.label = label
        runs = [Run("A"), Run("A"), Run("B"), Run("A")]
        groups = figures.seed_groups(runs)
        self.assertEqual([[r.label for r in g] for g in groups], [["A", "A", "A"], ["B"]])


if __name__ == "__main__":
    unittest.main()
