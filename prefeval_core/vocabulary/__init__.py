"""The domain vocabulary every layer speaks: outcome codes (``>``, ``=``, ``<``), what a human is
asked (a rating or a comparison), and the one rule for combining annotators. No numerical logic."""
