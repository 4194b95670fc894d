"""Metrics computed from texts: sacrebleu string metrics, an embedding similarity and an
SEScore2-style learned metric (method.md §11). The encoder and torch are imported lazily, so
this package imports without PyTorch; only ``embed`` and ``sescore2`` need the extra
``requirements-learned.txt``."""
