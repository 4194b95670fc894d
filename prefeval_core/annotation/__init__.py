"""What people are handed and what they hand back: request files, Label Studio tasks, blind tokens,
which side is shown left, the rating scale, and statistics on stored judgments (agreement,
position bias)."""
