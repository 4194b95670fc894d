"""Start a live study outside the dashboard (``prefeval studies start``, ``prefeval_core.start_study``):
the same record the Protocol page writes, so the dashboard, ``studies step``, request files and
Label Studio all take it from there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from prefeval_core.data.bundled import SAMPLE_PREFIX, data_path
from prefeval_core.data.dataset import table_files
from prefeval_core.errors import SettingsError
from prefeval_core.store import Store
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.studies import Study, begin_study


def data_choice(paths: Sequence[str | Path]) -> DataChoice:
    """The data of a study as the store keeps it: ``sample:NAME`` (alone) is the bundled sample;
    else the files, a folder standing for its table files, read now and kept in the study record
    (so it loads the same data wherever the store is opened).

    Raises:
        SettingsError: no path, a sample among files, an unknown sample, or a file that cannot be read.
    """
    specs = [str(p) for p in paths]
    if not specs:
        raise SettingsError.single("bad_setting", "give the study's data (files, a folder or sample:NAME)", column="--data")
    if any(s.startswith(SAMPLE_PREFIX) for s in specs):
        if len(specs) > 1:
            raise SettingsError.single("bad_setting", "a bundled sample is a study's whole data: give it alone", column="--data")
        data_path(specs[0])  # an unknown sample is refused here, naming the known ones
        return DataChoice.sample(specs[0].removeprefix(SAMPLE_PREFIX))
    files: list[Path] = []
    for spec in map(Path, specs):
        files += table_files(spec) if spec.is_dir() else [spec]
    try:
        read = tuple((f.name, f.read_bytes()) for f in files)
    except OSError as error:
        raise SettingsError.single("bad_setting", f"cannot read {error.filename} ({error.strerror})", column="--data") from None
    return DataChoice("upload", Path(specs[0]).name, read)


def start_live_study(
    store: Store, data: DataChoice, setup: StudySetup, *, name: str = "", criterion: str = "", guidelines: str = ""
) -> Study:
    """Record a new live study of ``setup`` on ``data`` in ``store`` with its first request open
    (the setup's mode is set to live); the criterion defaults to the human rater's.

    Raises:
        DataError: the data cannot be read.
        SettingsError: the setup does not fit the data.
    """
    live = replace(setup, mode="live")
    return begin_study(store, data, data.load(), live, name, criterion=criterion, guidelines=guidelines)
