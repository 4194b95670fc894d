"""The domain vocabulary every layer speaks: outcome codes (``>``, ``=``, ``<``), what a human is
asked (a rating or a comparison), the one rule for combining annotators, the default levels
(``levels``: γ, β), and names in English sentences (``words``). No numerical logic."""
