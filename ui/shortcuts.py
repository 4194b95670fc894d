"""Keyboard shortcuts for buttons: Streamlit has no key bindings, so a tiny script (no
download, works offline) listens for key presses in the app's page and clicks the button
whose ``key`` matches, found by the ``st-key-<key>`` class Streamlit puts on keyed widgets.

The script runs in an ``st.iframe`` and installs the listener in the parent page
(same origin), replacing any earlier one, so reruns never stack listeners. Keys typed into
text fields, and keys with Ctrl/Alt/Meta, are left alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import streamlit as st

_TEMPLATE = """
<script>
(function () {
  const doc = window.parent.document;
  const old = doc.getElementById("prefeval-shortcuts");
  if (old) { old.remove(); }
  const script = doc.createElement("script");
  script.id = "prefeval-shortcuts";
  script.textContent = `(function () {
    const keys = __KEYS__;
    if (window.__prefevalKeydown) { document.removeEventListener("keydown", window.__prefevalKeydown, true); }
    window.__prefevalKeydown = function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) { return; }
      const target = event.target;
      if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) { return; }
      const widget = keys[event.key];
      if (!widget) { return; }
      const button = document.querySelector(".st-key-" + widget + " button");
      if (!button || button.disabled) { return; }
      event.preventDefault();
      button.click();
    };
    document.addEventListener("keydown", window.__prefevalKeydown, true);
  })();`;
  doc.head.appendChild(script);
})();
</script>
"""


def keyboard_shortcuts(bindings: Mapping[str, str]) -> None:
    """Bind keys (``KeyboardEvent.key`` values, e.g. ``"a"``, ``"ArrowLeft"``) to button keys.

    Button keys must be plain identifiers (letters, digits, ``_``, ``-``): they become CSS classes.
    """
    for widget in bindings.values():
        if not widget.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"button key {widget!r} must be letters, digits, '_' or '-' to be found by a shortcut")
    # Our own fixed script (no data in it), so the iframe with same-origin access is safe here.
    st.iframe(_TEMPLATE.replace("__KEYS__", json.dumps(dict(bindings))), height=1, tab_index=-1)
