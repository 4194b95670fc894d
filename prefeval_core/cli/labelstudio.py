"""``labelstudio export STUDY [--out DIR] [--seed N]`` and ``labelstudio import STUDY FILE``: a study's
open request as a Label Studio project, and Label Studio's JSON export back into the store.

``export`` writes ``DIR/tasks.json`` (import it into a Label Studio project) and ``DIR/config.xml``
(the project's labeling interface); ``import`` stores every judgment of the export in the study,
once however often the file is imported, and says how many were new; ``studies step STUDY`` then
feeds the complete ones to the protocol. The store is the dashboard's (``$PREFEVAL_DATABASE_URL``,
else SQLite in ``$PREFEVAL_DATA_DIR``). Formats and checks: :mod:`prefeval_core.labelstudio`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from prefeval_core.cli._common import positive_int, print_json, read_input_file, seed_int
from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import UnsupportedFormatError
from prefeval_core.labelstudio import comparison_project, rating_control, rating_project, read_label_studio_export, study_tasks
from prefeval_core.protocol import next_request
from prefeval_core.store import open_store
from prefeval_core.tasks import ComparisonTask, RatingTask
from prefeval_core.workflow.studies import Study, resume_study, study_parts


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "labelstudio",
        help="a study's request as a Label Studio project, and Label Studio's export back as judgments",
        description="export: the open request of a study as Label Studio tasks (tasks.json) and labeling config (config.xml); "
        "import: Label Studio's JSON export of that project into the store, as the study's judgments.",
    )
    parser.add_argument("action", choices=("export", "import"), help="what to do")
    parser.add_argument("study", type=positive_int, help="the study's id (see `studies list`)")
    parser.add_argument("file", nargs="?", help="import: Label Studio's JSON export")
    parser.add_argument("--out", default=".", help="export: the folder to write tasks.json and config.xml to (default: here)")
    parser.add_argument("--seed", type=seed_int, default=0, help="export: seed of the left/right order of comparisons (default 0)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    store = open_store()
    data, _ = study_parts(store.study(args.study))
    dataset = data.load()
    study = resume_study(store, args.study, dataset)
    output = _export(study, dataset, Path(args.out), args.seed) if args.action == "export" else _import(study, dataset, args.file)
    if args.json:
        print_json(output)
    elif args.action == "export":
        print(f"study #{study.id}: {output['tasks']} tasks ({output['unit']}, {output['control']}) written to {output['tasks_file']}")
        print(f"labeling config: {output['config_file']}")
    else:
        counts = f"{output['added']} new, {output['already_there']} already stored"
        print(f"study #{study.id}: {output['judgments']} judgments in {output['tasks']} tasks; {counts}")
        print(f"{output['unanswered']} tasks not judged yet, {output['skipped']} annotations skipped")
    return 0


def _export(study: Study, dataset: Dataset, folder: Path, seed: int) -> dict[str, Any]:
    tasks = next_request(study.state).tasks
    scale = study.rating_scale(dataset)
    if scale is None:
        pairs = [t for t in tasks if isinstance(t, ComparisonTask)]
        project = comparison_project(pairs, study.data.key, texts=dataset.texts, sources=dataset.sources, study_id=study.id, seed=seed)
        control = "choices"
    else:
        outputs = [t for t in tasks if isinstance(t, RatingTask)]
        project = rating_project(outputs, study.data.key, scale, texts=dataset.texts, sources=dataset.sources, study_id=study.id)
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


def _import(study: Study, dataset: Dataset, file: str | None) -> dict[str, Any]:
    if file is None:
        raise SystemExit("labelstudio import: give the file Label Studio exported (JSON)")
    name, data = read_input_file(file)
    scale = study.rating_scale(dataset)
    loaded = read_label_studio_export(
        name, data, study.data.key, study_id=study.id, systems=dataset.systems, scale=scale, known=study_tasks(study.table)
    )
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
