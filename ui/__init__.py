"""The Streamlit shell around ``prefeval_core``: session state, caching, error display, widgets.

Pages import from here; nothing in ``prefeval_core`` imports this package.
"""
