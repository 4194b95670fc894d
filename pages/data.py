"""Data: a bundled sample or your own files, checked; the raters; what the data covers."""

from ui import cache
from ui.data_widgets import data_source_picker, loaded_message, rater_picker, rater_roles_view, summary_view, text_metrics_form
from ui.errors import user_errors
from ui.page import begin

choice, dataset = begin("Data", before_loading=data_source_picker)
loaded_message(dataset)
text_metrics_form(dataset, choice)
human, metrics = rater_picker(dataset)
with user_errors("Summarising the data"):
    summary = cache.summary(choice, human, metrics[0] if metrics else None)
summary_view(dataset, summary)
rater_roles_view(dataset, choice, human, metrics)
