"""What leaves the workbench: the judge card and what is done with it.

``card`` (the calibrated judge card; its model is :mod:`judges.card_model`, below the outputs,
so the acceptance rules can use it), ``pairwise_card`` (the card of a pairwise judge), ``gate``
(score new verdicts through a card and pass or fail CI), ``compare`` (two versions of a system
through one card) and ``drift`` (does a card still hold).
"""
