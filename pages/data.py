"""Data: a bundled sample or your own files, checked; the raters; what the data covers."""

from ui import cache
from ui.data_widgets import data_source_picker, loaded_message, rater_picker, summary_view, text_metrics_form
from ui.errors import user_errors
from ui.page import begin

choice, dataset = begin("Data", before_loading=data_source_picker)
loaded_message(dataset)
text_metrics_form(dataset, choice)
human, metric = rater_picker(dataset)
with user_errors("Summarising the data"):
    summary = cache.summary(choice, human, metric)
summary_view(dataset, summary)
