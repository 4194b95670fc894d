"""The ``--rules`` names the question-control benchmarks share (``bench_question_control.py``,
``bench_anchors.py``): an error control and a statistic each."""

RULES = {
    "question": ("question", "mean"),
    "pool": ("question", "pool_mean"),
    "clt": ("question", "pool_mean_clt"),
    "sign_pool": ("question", "pool_sign"),
    "sign_clt": ("question", "pool_sign_clt"),
    "question_sign": ("question", "sign"),
    "spending": ("spending", "sign"),
}
"""Question-level control with the mean statistic, the exact pool-mean statistic or its asymptotic
form (the metrics inside as control variates), the same two pool tests of the net win rate,
question-level control on the sign counts (the human-only mixture e-process), and round 2's per-pair
spending rule with the sign statistic."""
RULE_HELP = (
    "question (mean), pool (pool_mean), clt (pool_mean_clt), sign_pool (pool_sign), sign_clt (pool_sign_clt), "
    "question_sign (sign), spending (sign)"
)
