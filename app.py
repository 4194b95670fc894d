"""prefeval dashboard (landing page for now; the full dashboard is its own issue)."""

import streamlit as st

from prefeval_core.data.dataset import load_dataset

st.set_page_config(page_title="prefeval", layout="wide")
st.title("prefeval")
st.write("Which text-generation system is really better — with as few paid human annotations as possible.")
dataset = load_dataset("sample_data/summeval")
st.metric("systems", len(dataset.systems))
