"""Tuning a judge without fooling yourself, and stress-testing it without experts.

* :mod:`judges.alignment.dev` — the dev side of the split (:mod:`labels.splits`): disagreement
  lists for tuning, never a test row.
* :mod:`judges.alignment.propose` — a proposer model writes a revision from dev disagreements.
* :mod:`judges.alignment.evaluate` — current vs proposed revision on the same test rows (rates,
  kappa, exact McNemar, certification), with the test-set use counted.
* :mod:`judges.alignment.stress` — perturbation tests with a known right answer.
* :mod:`judges.stores.alignment_store` (beside this package, not in it) — their tables (migration
set
  ``alignment``): the calibration report reads the test-set use from it too, and the report
  sits below this package.
"""
