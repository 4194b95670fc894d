"""``studies [list|show ID|step ID|agreement ID|report ID [--out FILE]|invite ID NAME|revoke ID NAME|rename ID NAME|archive ID|
unarchive ID] [--json]``:
the studies in the store, as the dashboard records them.

``list`` prints every study (of a data key with ``--data-key``), newest first; ``show ID`` where a
study stands (round, cost, decided pairs, the answer, the open request); ``step ID`` moves it on
by one step and records it: a replay study runs its next round, a live study takes the stored
judgments that are complete (judged by enough annotators) and decides, keeping the open requests
nobody judged yet queued (``--withdraw-open``: withdraws them); ``agreement ID`` how its
annotators agree and whether each favours the left output (as on the Annotate page); ``report ID``
writes its report (HTML, as the Report page: the answer, the leaderboard, the settings, the
decisions) to ``--out`` (default ``study-ID.html``). ``invite ID
NAME`` prints a personal link for annotator NAME (it opens only their queue in study ID; the store
keeps only a hash of its token), ``revoke ID NAME`` withdraws it; ``rename`` and ``archive`` /
``unarchive`` file the study (``list --all`` shows archived studies too). The store is the one the
dashboard uses (``$PREFEVAL_DATABASE_URL``, else SQLite in ``$PREFEVAL_DATA_DIR``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from prefeval_core.cli._common import name_list, open_study, positive_int, print_json, progress, seed_int, usage_error, write_study_report
from prefeval_core.cli._terminal import print_safe

if TYPE_CHECKING:
    from prefeval_core.store import Store
    from prefeval_core.workflow.datasets import Dataset
    from prefeval_core.workflow.studies import Study


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "studies",
        help="list, show and step the studies recorded in the store; their annotators' agreement",
        description="The studies the dashboard records in the store (a replay or live protocol run each): list them, show "
        "where one stands, move one on by a step (the next replay round, or the stored judgments of a live study), or "
        "show how its annotators agree and whether each favours the left output.",
    )
    parser.add_argument(
        "action",
        nargs="?",
        choices=("list", "show", "step", "agreement", "report", "start", *TEAM_ACTIONS),
        default="list",
        help="what to do (default list)",
    )
    parser.add_argument("study", nargs="?", type=positive_int, help="the study's id (every action but list and start)")
    parser.add_argument("name", nargs="?", help="invite, revoke: the annotator's name; rename: the study's new name")
    parser.add_argument("--base-url", default="http://localhost:8501", help="invite: the dashboard's address the link starts with")
    parser.add_argument("--all", action="store_true", help="list: archived studies too")
    parser.add_argument(
        "--withdraw-open",
        action="store_true",
        help="step, live study: withdraw the open requests nobody judged yet (default: keep them queued for the next round)",
    )
    parser.add_argument("--out", help="report: the HTML file to write (default: study-<id>.html)")
    parser.add_argument("--data-key", help="list only the studies of this data key (e.g. sample:summeval)")
    parser.add_argument(
        "--metric",
        help="agreement: the metric to compare the annotators with (default: the study's first metric, else the data's first metric); "
        "start: the metric rater(s), A[,B]",
    )
    start = parser.add_argument_group("start: a new live study (then shown as by `show`)")
    start.add_argument("--data", nargs="+", metavar="PATH", help="files, a folder, or sample:NAME (kept with the study)")
    start.add_argument("--human", help="the human rater whose criterion the annotators judge, e.g. human:relevance")
    start.add_argument("--unit", choices=("ratings", "comparisons"), help="what one paid judgment is (default: from the human rater)")
    start.add_argument("--budget", type=positive_int, help="the most judgments to pay for (a live study needs one)")
    start.add_argument("--batch", type=positive_int, default=10, help="per round: items per system, or comparisons per pair (default 10)")
    start.add_argument("--per-item", type=positive_int, default=1, help="different annotators per requested item (default 1)")
    start.add_argument("--seed", type=seed_int, default=0, help="seed of the request order and the sampler (default 0)")
    start.add_argument("--criterion", default="", help="what annotators judge (default: from --human, human:relevance -> relevance)")
    start.add_argument("--study-name", default="", help="the study's name (default: its question and raters)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.status import judge_sentence
    from prefeval_core.workflow.studies import all_study_details, list_studies, step_study, study_json, study_store

    store = study_store()
    if args.action == "list":
        details = all_study_details(store)
        rows = [
            {"id": s.study.id, "name": s.study.name, "dataset": s.study.dataset, "rounds": s.rounds, "cost": s.cost,
             "judgments_per_item": s.study.judgments_per_item, "created_at": s.study.created_at, "updated_at": s.updated_at,
             "kind": details[s.study.id].kind if s.study.id in details else None,
             "archived": s.study.id in details and details[s.study.id].archived_at is not None}
            for s in list_studies(store, args.data_key, archived=args.all)
        ]  # fmt: skip
        if args.json:
            print_json(rows)
        for row in [] if args.json else rows:
            mark = f"{row['kind'] or 'study'}{', archived' if row['archived'] else ''}"
            print_safe(f"#{row['id']}  {row['name']}  [{row['dataset']}, {mark}]  {row['rounds']} rounds, cost {row['cost'] or 0:g}")
        return 0
    if args.action == "start":
        if not args.data or not args.human:
            return usage_error("studies start: give --data and --human")
        args.action, args.study = "show", _start(store, args)
    if args.study is None:
        return usage_error(f"studies {args.action}: give the study's id")
    if args.action in TEAM_ACTIONS:
        return _team(args)
    study, dataset = open_study(args.study)
    if args.action == "agreement":
        return _agreement(study, dataset, args.metric, args.json)
    if args.action == "report":
        return _report(study, args.out or f"study-{study.id}.html", args.json)
    if args.action == "step":
        study = step_study(study_store(), study, progress=progress, open_requests="withdraw" if args.withdraw_open else "keep")
    output = study_json(study)
    if args.json:
        print_json(output)
    else:
        print_safe(
            f"study #{study.id} {study.record.name}: round {output['round']}, {output['cost_used']} of {output['budget']} {output['unit']}"
        )
        print_safe(output["answer"])
        print_safe(f"{output['progress_words']}; {output['stop_words']}; next request: {output['requested']} tasks")
        if output["judge_role"] is not None:
            print_safe(judge_sentence(output["setup"]["metrics"], output["judge_role"]))
    return 0


TEAM_ACTIONS = ("invite", "revoke", "rename", "archive", "unarchive")


def _report(study: Study, path: str, as_json: bool) -> int:
    """Write the study's report (the dashboard's Report page, without the metric check) to ``path``."""
    write_study_report(path, f"prefeval report: study #{study.id} {study.record.name}", study.state, study.setup)
    print_json({"study": study.id, "file": path}) if as_json else print_safe(f"study #{study.id}: report written to {path}")
    return 0


def _start(store: Store, args: argparse.Namespace) -> int:
    """The id of a new live study of the ``start`` options."""
    from prefeval_core.workflow.live_study import data_choice, start_live_study
    from prefeval_core.workflow.setup import StudySetup

    setup = StudySetup(
        human=args.human, metrics=name_list(args.metric) if args.metric else (), unit=args.unit, budget=args.budget, batch=args.batch,
        seed=args.seed, judgments_per_item=args.per_item, mode="live",
    )  # fmt: skip
    return start_live_study(store, data_choice(args.data), setup, name=args.study_name, criterion=args.criterion).id


def _team(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.roles import annotator_link, invite_annotator, revoke_annotator
    from prefeval_core.workflow.studies import archive_study, rename_study, study_store

    store = study_store()
    if args.action in ("invite", "revoke", "rename") and not (args.name or "").strip():
        return usage_error(f"studies {args.action}: give a name after the study's id")
    name = (args.name or "").strip()
    if args.action == "invite":
        store.study(args.study)
        link = annotator_link(args.base_url, invite_annotator(store, args.study, args.name))
        output, words = {"study": args.study, "annotator": name, "link": link}, link
    elif args.action == "revoke":
        revoked = revoke_annotator(store, args.study, args.name)
        output = {"study": args.study, "annotator": name, "revoked": revoked}
        words = f"study #{args.study}: {revoked} link(s) of {name} revoked"
    elif args.action == "rename":
        rename_study(store, args.study, args.name)
        output, words = {"study": args.study, "name": name}, f"study #{args.study} is now named {name}"
    else:
        archived = args.action == "archive"
        archive_study(store, args.study, archived)
        output = {"study": args.study, "archived": archived}
        words = f"study #{args.study} {'archived' if archived else 'back from the archive'}"
    print_json(output) if args.json else print_safe(words)
    return 0


def _agreement(study: Study, dataset: Dataset, metric: str | None, as_json: bool) -> int:
    from prefeval_core.workflow.annotators import study_annotators
    from prefeval_core.workflow.studies import study_store

    report = study_annotators(study_store(), study, dataset, metric)
    if as_json:
        print_json({"study": study.id, **report.as_json()})
        return 0
    for name, agreement in (("comparisons", report.comparisons), ("ratings", report.ratings)):
        if agreement is None:
            continue
        kappa = "" if agreement.cohen_kappa is None else f", Cohen's kappa {agreement.cohen_kappa:.3f}"
        print_safe(f"study #{study.id}, agreement on {name} ({agreement.shared_units} units judged twice or more): "
              f"Krippendorff's alpha {agreement.alpha:.3f}{kappa}")  # fmt: skip
        with_metric = f", with {report.metric} {{:.3f}}" if report.metric else ""
        for each in agreement.per_annotator:
            print_safe(
                f"  {each.annotator}: {each.judgments} judged, alpha with the others {each.with_others:.3f}"
                + with_metric.format(each.with_metric)
            )
    if report.comparisons is None and report.ratings is None:
        print_safe(f"study #{study.id}: fewer than two annotators per kind of judgment, no agreement to measure")
    for side in report.sides:
        print_safe(f"  {side.annotator}: the left output won {side.left_won} of {side.decisive} decisive comparisons "
              f"(p = {side.p_value:.3g} for no position bias)")  # fmt: skip
    return 0
