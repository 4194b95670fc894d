"""The domain vocabulary every layer speaks: outcome codes (``>``, ``=``, ``<``), what a human is
asked (a rating or a comparison), the one rule for combining annotators, and the default levels
(``levels``: γ, β). No numerical logic."""
