"""Your queue: what an invited annotator sees (their link's study and criterion, one task at a time)."""

from ui.judge_widgets import begin_judging, judge

judge(*begin_judging())
