"""Tampered session files, generated from valid ones (seeded; nothing committed as a blob).

:func:`base_sessions` saves real sessions (each bundled sample with a protocol run of two
rounds, in both units where the human rater allows, plus an upload), each with judgments of
both kinds. :func:`tampered_session` makes mutation ``index`` of a seeded campaign: the
mutation kinds of :data:`MUTATIONS` in turn, applied to a base session chosen by the seed.
Each mutation says what must happen: ``refuse`` (with a problem at ``path``, or naming only
the file where the file as a whole is unreadable) or ``restore`` (a harmless change).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from prefeval_core.annotation.left_right import make_comparison
from prefeval_core.protocol import state_to_dict
from prefeval_core.store import Judgment, Rating
from prefeval_core.workflow import StudySetup, run_replay, study_table
from prefeval_core.workflow.session import DataChoice, SessionSnapshot, sample_names, session_to_json

Expect = Literal["refuse", "restore"]
Doc = dict[str, Any]
RAW = "@@raw@@"
"""A string value replaced by raw JSON text after dumping (NaN, 5,000-digit integers, deep nesting)."""

WIDE = b"item_id,system,human,bleu\ni1,A,1,0.5\ni1,B,2,0.1\ni1,C,3,0.3\ni2,A,3,0.3\ni2,B,1,0.2\ni2,C,2,0.4\n"


@dataclass(frozen=True)
class Base:
    """A valid session: its name (``sample/unit``) and its JSON document."""

    name: str
    document: Doc
    protocol: bool
    unit: str | None


@dataclass(frozen=True)
class Tampered:
    """One tampered session file: the mutation kind, the base it came from, the file's bytes,
    what must happen, and the JSON path a refusal must name (``None``: the file as a whole)."""

    index: int
    kind: str
    base: str
    data: bytes
    expect: Expect
    path: str | None


def _judgments(choice: DataChoice, items: tuple[str, ...], systems: tuple[str, ...]) -> tuple[Judgment, ...]:
    a, b = systems[0], systems[1]
    return (
        make_comparison(choice.key, items[0], a, b, "left", "ann1", left_system=b),
        make_comparison(choice.key, items[1], a, b, "tie", "ann2", left_system=a),
        Rating(choice.key, items[0], a, 4.0, "ann1", "2026-11-23T10:00:00.000+00:00"),
        Rating(choice.key, items[1], b, 2.5, "ann2", "2026-11-23T10:00:01.000+00:00"),
    )


_RATERS = {"pandalm": ("human", "gpt-3.5-turbo"), "wmt21_ted": ("human", "chrF")}


def _sample_session(name: str, unit: str) -> Base:
    choice = DataChoice.sample(name)
    dataset = choice.load()
    human, metric = _RATERS.get(name, ("human:relevance", "rougeL"))
    setup = StudySetup(human=human, metrics=(metric,), unit=unit, batch=3, max_rounds=2)  # type: ignore[arg-type]
    state = run_replay(study_table(dataset, setup), setup).state
    snapshot = SessionSnapshot(
        data=choice,
        human=human,
        metrics=(metric,),
        setup=setup.as_dict(),
        check={"human": human, "metric": metric, "eps": 0.0, "gamma": 0.05, "seed": 0},
        protocol=state_to_dict(state),
        annotations=_judgments(choice, dataset.items, dataset.systems),
    )
    return Base(f"{name}/{unit}", json.loads(session_to_json(snapshot)), True, unit)


def _upload_session() -> Base:
    choice = DataChoice("upload", "mine", files=(("wide.csv", WIDE),), kinds=(("wide.csv", "wide_ratings"),))
    snapshot = SessionSnapshot(
        data=choice,
        human="human",
        metrics=("bleu",),
        setup={"human": "human", "metrics": ["bleu"], "budget": 4, "batch": 1},
        check={"human": "human", "metric": "bleu", "eps": 0.0, "gamma": 0.05, "seed": 0},
        annotations=_judgments(choice, ("i1", "i2"), ("A", "B", "C")),
    )
    return Base("upload", json.loads(session_to_json(snapshot)), False, None)


@cache
def base_sessions() -> tuple[Base, ...]:
    """Every bundled sample with a two-round protocol (ratings and comparisons where the human
    rater is scalar; comparisons for a pairwise one), and an uploaded file without a protocol."""
    bases = [_upload_session()]
    for name in sample_names():
        units = ("comparisons",) if name == "pandalm" else ("ratings", "comparisons")
        bases += [_sample_session(name, unit) for unit in units]
    return tuple(bases)


# --- mutations -------------------------------------------------------------------------------
# Each takes a deep copy of a base document and a seeded rng, changes the copy and returns the
# JSON path the refusal must name (None: a file-level refusal); `text` mutations work on bytes.


@dataclass(frozen=True)
class Mutation:
    kind: str
    expect: Expect
    apply: Callable[[Doc, random.Random], str | None]
    needs_protocol: bool = False
    unit: str | None = None
    text: Callable[[bytes, random.Random], bytes] | None = None


def _set(path: str, value: Any) -> Callable[[Doc, random.Random], str | None]:
    """Set the value at a dotted path (``a.b[0].c``; ``[r]``: a random index of that list)."""

    def apply(doc: Doc, rng: random.Random) -> str:
        parts = path.replace("[", ".[").split(".")
        node: Any = doc
        shown: list[str] = []
        for part in parts[:-1]:
            if part.startswith("["):
                index = rng.randrange(len(node)) if part == "[r]" else int(part[1:-1])
                node, shown = node[index], [*shown, f"[{index}]"]
            else:
                node, shown = node.setdefault(part, {}), [*shown, f".{part}" if shown else part]  # e.g. a setup without a question
        last = parts[-1]
        if last.startswith("["):
            index = rng.randrange(len(node)) if last == "[r]" else int(last[1:-1])
            node[index] = value(doc) if callable(value) else value
            shown.append(f"[{index}]")
        else:
            node[last] = value(doc) if callable(value) else value
            shown.append(f".{last}" if shown else last)
        return "".join(shown)

    return apply


def _of_a_study_elsewhere(doc: Doc, rng: random.Random) -> None:
    """The first annotation as a session saved on another machine holds it: of study 999, its
    request id and identity made for that study."""
    from prefeval_core.store import request_id_for

    first = doc["annotations"][0]
    systems = (first["system_a"], first["system_b"]) if "system_a" in first else (first["system"],)
    first.update(study_id=999, request_id=request_id_for(first["dataset"], 999, first["item_id"], systems), identity="")


def _copy_with_a_new_identity(doc: Doc, rng: random.Random) -> str:
    doc["annotations"].append(dict(doc["annotations"][0], identity="e" * 32))
    return f"annotations[{len(doc['annotations']) - 1}].identity"


def _settings(doc: Doc) -> dict[str, Any]:
    return doc["protocol"]["settings"]


def _repeat_first(pairs: list[int]) -> list[int]:
    return [pairs[0], pairs[0], *pairs[2:]]


def _refuse(kind: str, path: str, value: Any, *, protocol: bool = False, unit: str | None = None, at: str | None = "") -> Mutation:
    """Set ``path`` to ``value``; the refusal must name ``at`` (default: the path itself)."""
    setter = _set(path, value)

    def apply(doc: Doc, rng: random.Random) -> str | None:
        where = setter(doc, rng)
        return where if at == "" else at

    return Mutation(kind, "refuse", apply, protocol, unit)


def _text(kind: str, expect: Expect, change: Callable[[bytes, random.Random], bytes]) -> Mutation:
    return Mutation(kind, expect, lambda doc, rng: None, text=change)


def _harmless(kind: str, change: Callable[[Doc, random.Random], None], *, protocol: bool = False) -> Mutation:
    def apply(doc: Doc, rng: random.Random) -> None:
        change(doc, rng)
        return None

    return Mutation(kind, "restore", apply, protocol)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(1, len(data) - 2)]


def _duplicate_key(data: bytes, rng: random.Random) -> bytes:
    return data.replace(b'"human": ', b'"human": "ghost", "human": ', 1)


def _budget_below_used(doc: Doc) -> int:
    used = sum(r[3] for r in doc["protocol"]["reveals"])
    return max(0, used - 1)


def _future_round(doc: Doc) -> list[Any]:
    first = list(doc["protocol"]["reveals"][0])
    first[2] = doc["protocol"]["round"] + 5
    return first


def _slot_out_of_range(doc: Doc) -> list[Any]:
    return [10**9, 1.0, 1, 1]


def _drop(key: str) -> Callable[[Doc, random.Random], None]:
    def change(doc: Doc, rng: random.Random) -> None:
        doc[key] = [] if isinstance(doc[key], list) else None

    return change


def _old_comparisons(doc: Doc, rng: random.Random) -> None:
    """Files of the previous release: comparisons only, without a ``kind``."""
    doc["annotations"] = [{k: v for k, v in a.items() if k != "kind"} for a in doc["annotations"] if a["kind"] == "comparison"]


def _reversed_keys(doc: Doc, rng: random.Random) -> None:
    items = list(doc.items())
    doc.clear()
    doc.update(reversed(items))


MUTATIONS: tuple[Mutation, ...] = (
    # wrong types where an object is
    _refuse("data_null", "data", None),
    _refuse("data_list", "data", []),
    _refuse("data_string", "data", "summeval"),
    _refuse("protocol_string", "protocol", "round 2", protocol=True),
    _refuse("protocol_list", "protocol", [1, 2], protocol=True),
    _refuse("setup_string", "setup", "replay", at="setup"),
    _refuse("annotation_null", "annotations[r]", None),
    _refuse("record_string", "protocol.records[r]", "x", protocol=True),
    _refuse("reveals_string", "protocol.reveals", "all", protocol=True),
    _refuse("files_string", "data.files", "wide.csv"),
    # numbers past the bounds, NaN and Infinity
    _refuse("huge_int_seed", "setup.seed", f"{RAW}{'7' * 5000}", at=None),
    _refuse("int_past_2_63", "setup.seed", 2**63),
    _refuse("nan_gamma", "setup.gamma", f"{RAW}NaN", at=None),
    _refuse("infinity_eps", "check.eps", f"{RAW}Infinity", at=None),
    _refuse("float_overflow", "setup.eps_human", f"{RAW}1e999", at=None),
    _refuse("nan_theta", "protocol.records[r].theta[r]", f"{RAW}NaN", protocol=True, at=None),
    _refuse("theta_5", "protocol.records[r].theta[r]", 5.0, protocol=True),
    _refuse("theta_negative", "protocol.records[r].theta[r]", -0.5, protocol=True),
    _refuse("p_mean_above_1", "protocol.records[r].p_mean[r][0]", 1.5, protocol=True),
    _refuse("nan_settings_eps", "protocol.settings.eps_metric", f"{RAW}-Infinity", protocol=True, at=None),
    _refuse("gamma_1", "setup.gamma", 1.0),
    _refuse("gamma_0", "protocol.settings.gamma", 0.0, protocol=True),
    _refuse("batch_0", "setup.batch", 0),
    _refuse("batch_float", "setup.batch", 2.5),
    _refuse("batch_string", "setup.batch", "10"),
    _refuse("seed_negative", "check.seed", -1),
    _refuse("eps_negative", "check.eps", -0.1),
    _refuse("round_negative", "protocol.round", -3, protocol=True),
    _refuse("round_bool", "protocol.round", True, protocol=True),
    _refuse("round_mismatch", "protocol.round", 7, protocol=True, at="protocol.round"),
    _refuse("budget_below_used", "protocol.settings.budget", _budget_below_used, protocol=True, at="protocol.settings.budget"),
    _refuse("budget_negative", "setup.budget", -5),
    _refuse("human_fraction_0", "setup.human_fraction", 0.0),
    # codes
    _refuse("outcome_7", "annotations[0].outcome", 7),
    _refuse("outcome_string", "annotations[1].outcome", "0"),
    _refuse("outcome_bool", "annotations[0].outcome", True),
    _refuse("score_nan", "annotations[2].score", f"{RAW}NaN", at=None),
    _refuse("score_string", "annotations[3].score", "4"),
    _refuse("decision_code_-1", "protocol.records[r].decision[r]", -1, protocol=True),
    _refuse("metric_code_-1", "protocol.reveals[r][1]", -1.0, protocol=True, unit="comparisons"),
    _refuse("outcome_code_7_revealed", "protocol.reveals[r][1]", 7.0, protocol=True, unit="comparisons"),
    _refuse("label_on_a_win", "annotations[0].label", "both_bad", at="annotations[0].label"),
    # names the code or the data do not know
    _refuse("unknown_sample", "data.name", "no-such-sample", at="data.name"),
    _refuse("unknown_data_kind", "data.kind", "folder"),
    _refuse("unknown_policy", "setup.policy", "random"),
    _refuse("unknown_policy_in_state", "protocol.settings.policy", "greedy", protocol=True),
    _refuse("unknown_mode_pool", "setup.mode", "pool"),
    _refuse("unknown_unit", "protocol.settings.unit", "minutes", protocol=True),
    _refuse("unknown_model", "setup.model", "gpt"),
    _refuse("unknown_question", "setup.question.kind", "best-of"),
    _refuse("unknown_error_control", "setup.error_control", "bonferroni"),
    _refuse("unknown_rater", "human", "ghost"),
    _refuse("unknown_metric", "metrics[0]", "ghost"),
    _refuse("unknown_setup_rater", "setup.human", "ghost", at="setup.human"),
    _refuse("unknown_check_metric", "check.metric", "ghost"),
    _refuse("unknown_system", "annotations[3].system", "zz-no-such-system"),
    _refuse("unknown_pair_system", "annotations[0].system_b", "zz-no-such-system", at="annotations[0]"),
    _refuse("unknown_item", "annotations[2].item_id", "no-such-item"),
    _refuse("annotation_of_other_data", "annotations[r].dataset", "sample:other"),
    _refuse("pair_not_canonical", "annotations[0].system_a", "zzz", at="annotations[0]"),
    _refuse("unknown_annotation_kind", "annotations[0].kind", "ranking", at="annotations[0]"),
    _refuse("extra_key", "surprise", {"x": 1}),
    _refuse("extra_setup_key", "setup.budget_usd", 10),
    _refuse("unknown_input_kind", "data.kinds", [["wide.csv", "spreadsheet"]], at="data.kinds[0][1]"),
    # indices out of the table
    _refuse("reveal_slot_out_of_range", "protocol.reveals[0]", _slot_out_of_range, protocol=True, at="protocol.reveals[0][0]"),
    _refuse("reveal_slot_negative", "protocol.reveals[r][0]", -1, protocol=True),
    _refuse("reveal_round_future", "protocol.reveals[0]", _future_round, protocol=True, at="protocol.reveals[0][2]"),
    _refuse("pair_out_of_range", "protocol.records[r].pairs[0]", 10**6, protocol=True),
    _refuse("members_too_short", "protocol.records[0].members", [True], protocol=True),
    _refuse("theta_too_short", "protocol.records[0].theta", [0.5], protocol=True),
    _refuse("record_round_renumbered", "protocol.records[0].round", 5, protocol=True),
    _refuse("state_format_1", "protocol.format", 1, protocol=True),
    _refuse("state_other_table", "protocol.table", "0" * 16, protocol=True),
    _refuse("protocol_without_setup", "setup", None, protocol=True, at="setup"),
    _refuse("mu_not_3x3", "protocol.settings.mu", [[1.0]], protocol=True),
    # identities and settings bent by hand (never a silent drop)
    _refuse("identity_of_another", "annotations[1].identity", lambda doc: doc["annotations"][0]["identity"]),
    _refuse("identity_changed", "annotations[0].identity", "f" * 32),
    _refuse("request_id_changed", "annotations[0].request_id", "0" * 32),
    Mutation("copy_with_a_new_identity", "refuse", _copy_with_a_new_identity),
    _refuse("unknown_rater_in_state", "protocol.settings.human", "human:nonexistent", protocol=True),
    _refuse(
        "state_settings_not_the_setups", "protocol.settings.batch", lambda doc: doc["protocol"]["settings"]["batch"] + 1, protocol=True
    ),
    _refuse(
        "pair_listed_twice", "protocol.records[0].pairs", lambda doc: _repeat_first(doc["protocol"]["records"][0]["pairs"]), protocol=True
    ),
    # settings that contradict each other
    _refuse("live_without_budget", "setup.mode", "live", protocol=True, at="setup.budget"),
    _refuse("metric_is_the_human", "setup.metrics", lambda doc: [doc["setup"]["human"]], at="setup"),
    # sizes
    _refuse("huge_metric_list", "metrics", [f"m{i}" for i in range(100_000)]),
    _refuse("huge_reveals", "protocol.reveals", [[i, 1.0, 1, 1] for i in range(200_000)], protocol=True, at="protocol"),
    _refuse("too_many_files", "data.files", [{"name": f"f{i}.csv", "base64": ""} for i in range(60)]),
    _refuse("bad_base64", "data.files", [{"name": "a.csv", "base64": "***"}], at="data.files[0].base64"),
    _refuse("deep_nesting", "metrics", f"{RAW}{_nested(40)}", at=None),
    _refuse("very_deep_nesting", "metrics", f"{RAW}{_nested(100_000)}", at=None),
    # the file as a whole
    _refuse("wrong_version", "prefeval_session", 3, at="prefeval_session"),
    _refuse("version_string", "prefeval_session", "2", at="prefeval_session"),
    _text("truncated", "refuse", _truncate),
    _text("duplicated_key", "refuse", _duplicate_key),
    _text("not_utf8", "refuse", lambda data, rng: b"\xff\xfe" + data[:50]),
    _text("empty", "refuse", lambda data, rng: b""),
    _text("top_level_list", "refuse", lambda data, rng: b"[" + data + b"]"),
    # harmless
    _harmless("reindented", lambda doc, rng: None),
    _harmless("keys_reordered", _reversed_keys),
    _harmless("no_annotations", _drop("annotations")),
    _harmless("no_check", _drop("check")),
    _harmless("old_comparisons_without_kind", _old_comparisons),
    _harmless("other_saved_at", lambda doc, rng: doc.update(saved_at="yesterday")),
    _harmless("no_protocol", _drop("protocol"), protocol=True),
    _harmless("annotation_of_a_study_elsewhere", _of_a_study_elsewhere),
    _text("escaped_unicode", "restore", lambda data, rng: data.replace(b'"human": "', b'"\\u0068uman": "', 1)),
)
KINDS: tuple[str, ...] = tuple(m.kind for m in MUTATIONS)


def _applies(mutation: Mutation, base: Base) -> bool:
    if mutation.needs_protocol and not base.protocol:
        return False
    if mutation.unit is not None and base.unit != mutation.unit:
        return False
    if mutation.kind in ("files_string", "too_many_files", "bad_base64", "unknown_input_kind"):
        return base.name == "upload"
    if mutation.kind == "unknown_sample":
        return base.name != "upload"
    return True


def _dump(document: Doc, rng: random.Random, indent: int | None) -> bytes:
    text = json.dumps(document, ensure_ascii=False, indent=indent)
    while f'"{RAW}' in text:  # raw JSON text stands in for the marked string
        start = text.index(f'"{RAW}')
        end = text.index('"', start + 1)
        text = text[:start] + text[start + 1 + len(RAW) : end] + text[end + 1 :]
    return text.encode()


def tampered_session(index: int, *, seed: int) -> Tampered:
    """Mutation ``index``: kind ``MUTATIONS[index % len(MUTATIONS)]`` on a base session and at
    positions chosen by ``(seed, index)``."""
    rng = random.Random(seed * 1_000_003 + index)
    mutation = MUTATIONS[index % len(MUTATIONS)]
    base = rng.choice([b for b in base_sessions() if _applies(mutation, b)])
    document = json.loads(json.dumps(base.document))
    path = mutation.apply(document, rng)
    data = _dump(document, rng, indent=rng.choice((None, 1, 2)))
    if mutation.text is not None:
        data = mutation.text(data, rng)
    return Tampered(index, mutation.kind, base.name, data, mutation.expect, path)
