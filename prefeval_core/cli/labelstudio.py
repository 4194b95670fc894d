"""``labelstudio push|pull STUDY --url URL --token TOKEN``: a study's open request straight into its
Label Studio project and the answers back (needs ``pip install 'prefeval[labelstudio]'``); and
``labelstudio export STUDY [--out DIR]`` / ``labelstudio import STUDY FILE``: the same as files.

``push`` creates the project or reuses it and adds only the tasks it lacks (round 2 never repeats
round 1's open tasks); ``pull`` and ``import`` store every answer once however often they run
(``pull`` names annotators by their e-mail) and say how many were new; ``studies step STUDY``
then feeds the complete ones to the protocol. ``export`` writes ``DIR/tasks.json`` and
``DIR/config.xml`` (the labeling interface). The token may come from ``$LABEL_STUDIO_API_KEY``.
The store is the dashboard's (``$PREFEVAL_DATABASE_URL``, else SQLite in ``$PREFEVAL_DATA_DIR``).
How: :mod:`prefeval_core.workflow.labelstudio`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from prefeval_core.cli._common import positive_int, print_json, read_input_file, seed_int, usage_error
from prefeval_core.cli._terminal import print_safe
from prefeval_core.errors import SettingsError, UnsupportedFormatError

TOKEN_VARIABLE = "LABEL_STUDIO_API_KEY"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "labelstudio",
        help="a study's request in Label Studio (push to a server, or export as files) and the answers back (pull, or import)",
        description="push: the open request of a study into its project on a Label Studio server (created or reused; only the "
        "tasks it lacks are added); pull: the answers in that project into the store. export: the open request as Label Studio "
        "tasks (tasks.json) and labeling config (config.xml); import: Label Studio's JSON export of that project into the store.",
    )
    parser.add_argument("action", choices=("push", "pull", "export", "import"), help="what to do")
    parser.add_argument("study", type=positive_int, help="the study's id (see `studies list`)")
    parser.add_argument("file", nargs="?", help="import: Label Studio's JSON export")
    parser.add_argument("--url", help="push, pull: the Label Studio server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token", help=f"push, pull: a Label Studio user's API token (default ${TOKEN_VARIABLE})")
    parser.add_argument(
        "--project", type=positive_int, help="push, pull: the project's id (default: the study's own, titled 'prefeval study ID (TAG)')"
    )
    parser.add_argument("--out", default=".", help="export: the folder to write tasks.json and config.xml to (default: here)")
    parser.add_argument("--seed", type=seed_int, default=0, help="push, export: seed of the left/right order of comparisons (default 0)")
    parser.add_argument(
        "--latest-wins", action="store_true", help="pull, import: of two different answers by one annotator to one task, the later counts"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.labelstudio import connect, import_export, pull_answers, push_round

    if args.action != "import" and args.file is not None:
        return usage_error(f"labelstudio {args.action} takes no file (export writes to the folder --out)")
    if args.action == "import" and args.file is None:
        return usage_error("labelstudio import: give the file Label Studio exported (JSON)")
    output: dict[str, Any]
    if args.action in ("push", "pull"):
        api = connect(*_server(args))
        if args.action == "push":
            output = push_round(api, args.study, project=args.project, seed=args.seed).to_json()
        else:
            output = pull_answers(api, args.study, project=args.project, latest_wins=args.latest_wins).to_json()
    elif args.action == "export":
        output = _export(args.study, Path(args.out), args.seed)
    else:
        name, data = read_input_file(args.file)
        output = import_export(args.study, name, data, latest_wins=args.latest_wins).to_json()
    if args.json:
        print_json(output)
    else:
        _print(args.action, output)
    return 0


def _server(args: argparse.Namespace) -> tuple[str, str]:
    token = args.token or os.environ.get(TOKEN_VARIABLE, "")
    missing = [name for name, value in (("--url", args.url), ("--token", token)) if not value]
    if missing:
        raise SettingsError.single("bad_setting", f"labelstudio {args.action} needs {' and '.join(missing)}")
    return args.url, token


def _export(study_id: int, folder: Path, seed: int) -> dict[str, Any]:
    from prefeval_core.workflow.labelstudio import export_project

    made = export_project(study_id, seed=seed)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tasks.json").write_bytes(made.project.tasks_json())
        (folder / "config.xml").write_text(made.project.config, encoding="utf-8")
    except OSError as error:
        raise UnsupportedFormatError.single(
            "unsupported", f"cannot write the project ({error.strerror or error})", file=str(folder)
        ) from None
    return {
        "study": made.study,
        "tasks": len(made.project.tasks),
        "unit": made.unit,
        "control": made.control,
        "tasks_file": str(folder / "tasks.json"),
        "config_file": str(folder / "config.xml"),
    }


def _print(action: str, output: dict[str, Any]) -> None:
    study = f"study #{output['study']}"
    if action == "export":
        print_safe(f"{study}: {output['tasks']} tasks ({output['unit']}, {output['control']}) written to {output['tasks_file']}")
        print_safe(f"labeling config: {output['config_file']}")
    elif action == "push":
        made = "created" if output["created"] else "reused"
        print_safe(f"{study}: Label Studio project {output['project']} ({output['title']}, {made})")
        print_safe(f"{output['added']} tasks added, {output['already_had']} of the open request already there")
    else:
        counts = f"{output['added']} new, {output['already_there']} already stored"
        if output["replaced"]:
            counts += f", {output['replaced']} earlier answers replaced by their edits"
        print_safe(f"{study}: {output['judgments']} judgments in {output['tasks']} tasks; {counts}")
        print_safe(f"{output['unanswered']} tasks not judged yet, {output['skipped']} annotations skipped")
