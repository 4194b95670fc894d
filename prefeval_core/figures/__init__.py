"""Plotly figures of the diagnostics: pure functions from core results to ``go.Figure``.

Every figure has a title, labelled axes with units, hover text naming systems and counts,
and colour-blind-safe colours (Okabe-Ito; sequential heatmaps in Cividis). The dashboard
only places them; :mod:`prefeval_core.figures.report` writes them into one offline HTML file.
"""
