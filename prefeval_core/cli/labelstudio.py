"""``labelstudio export STUDY [--out DIR] [--seed N]`` and ``labelstudio import STUDY FILE``: a study's
open request as a Label Studio project, and Label Studio's JSON export back into the store.

``export`` writes ``DIR/tasks.json`` (import it into a Label Studio project) and ``DIR/config.xml``
(the project's labeling interface); ``import`` stores every judgment of the export in the study,
once however often the file is imported, and says how many were new; ``studies step STUDY`` then
feeds the complete ones to the protocol. The store is the dashboard's (``$PREFEVAL_DATABASE_URL``,
else SQLite in ``$PREFEVAL_DATA_DIR``). Formats and checks: :mod:`prefeval_core.annotation.labelstudio`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from prefeval_core.annotation.labelstudio import comparison_project, rating_control, rating_project, read_label_studio_export, study_tasks
from prefeval_core.cli._common import add_request_exchange_arguments, open_study, print_json, read_input_file
from prefeval_core.cli._terminal import print_safe
from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import UnsupportedFormatError
from prefeval_core.protocol import next_request
from prefeval_core.store import open_store
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask
from prefeval_core.workflow.request_files import blind_key
from prefeval_core.workflow.studies import Study


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "labelstudio",
        help="a study's request as a Label Studio project, and Label Studio's export back as judgments",
        description="export: the open request of a study as Label Studio tasks (tasks.json) and labeling config (config.xml); "
        "import: Label Studio's JSON export of that project into the store, as the study's judgments.",
    )
    add_request_exchange_arguments(
        parser, file_help="Label Studio's JSON export", out_default=".",
        out_help="the folder to write tasks.json and config.xml to (default: here)",
    )  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    study, dataset = open_study(args.study)
    if args.action == "export":
        output = _export(study, dataset, Path(args.out), args.seed)
    else:
        output = _import(study, dataset, args.file, latest_wins=args.latest_wins)
    if args.json:
        print_json(output)
    elif args.action == "export":
        print_safe(f"study #{study.id}: {output['tasks']} tasks ({output['unit']}, {output['control']}) written to {output['tasks_file']}")
        print_safe(f"labeling config: {output['config_file']}")
    else:
        counts = f"{output['added']} new, {output['already_there']} already stored"
        print_safe(f"study #{study.id}: {output['judgments']} judgments in {output['tasks']} tasks; {counts}")
        print_safe(f"{output['unanswered']} tasks not judged yet, {output['skipped']} annotations skipped")
    return 0


def _export(study: Study, dataset: Dataset, folder: Path, seed: int) -> dict[str, Any]:
    tasks = next_request(study.state).tasks
    scale = study.rating_scale(dataset)
    key = blind_key(None, study.data.key, study.id)
    if scale is None:
        pairs = [t for t in tasks if isinstance(t, ComparisonTask)]
        project = comparison_project(
            pairs, study.data.key, key=key, texts=dataset.texts, sources=dataset.sources, study_id=study.id, seed=seed,
            criterion=study.criterion,
        )  # fmt: skip
        control = "choices"
    else:
        outputs = [t for t in tasks if isinstance(t, RatingTask)]
        project = rating_project(
            outputs, study.data.key, scale, key=key, texts=dataset.texts, sources=dataset.sources, study_id=study.id,
            criterion=study.criterion,
        )  # fmt: skip
        control = rating_control(scale)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tasks.json").write_bytes(project.tasks_json())
        (folder / "config.xml").write_text(project.config, encoding="utf-8")
    except OSError as error:
        raise UnsupportedFormatError.single(
            "unsupported", f"cannot write the project ({error.strerror or error})", file=str(folder)
        ) from None
    return {
        "study": study.id,
        "tasks": len(project.tasks),
        "unit": study.table.unit,
        "control": control,
        "tasks_file": str(folder / "tasks.json"),
        "config_file": str(folder / "config.xml"),
    }


def _import(study: Study, dataset: Dataset, file: str | None, *, latest_wins: bool) -> dict[str, Any]:
    if file is None:
        raise SystemExit("labelstudio import: give the file Label Studio exported (JSON)")
    name, data = read_input_file(file)
    scale = study.rating_scale(dataset)
    loaded = read_label_studio_export(
        name, data, study.data.key, study_id=study.id, systems=dataset.systems, scale=scale, known=study_tasks(study.table),
        key=blind_key(None, study.data.key, study.id), latest_wins=latest_wins,
    )  # fmt: skip
    stored = open_store().add_many(loaded.judgments)
    return {
        "study": study.id,
        "tasks": loaded.tasks,
        "judgments": len(loaded.judgments),
        "added": stored.added,
        "already_there": stored.already_there,
        "unanswered": loaded.unanswered,
        "skipped": loaded.skipped,
    }
