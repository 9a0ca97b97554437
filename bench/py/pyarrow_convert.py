"""pyarrow conversions of agora's tables, for `bench/cmd/compare`.

    python pyarrow_convert.py --dataset crowdrag25 --data DIR --out DIR --threads 2

pyarrow.compute and numpy on Arrow buffers; pyarrow has no window functions and no
JSON-text parser, so occurrence/seq use numpy and DeliData's sol_tracker_all (JSON text to
MAP) and team_performance_recomputed are plain Python loops. Writes Hive-partitioned
Parquet (zstd level 1, 65,536-row row groups) and prints {"tables": {name: rows},
"missing": [...]} as the last stdout line. agora's validate rules, manifest and dataset card
are not reproduced (the generated inputs are valid).
"""

import argparse
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.dataset as ds
import pyarrow.json as pjson
import pyarrow.parquet as pq

DIMS = ["correctness_topical", "coherence_logical", "coherence_stylistic", "coverage_broad",
        "coverage_deep", "consistency_internal", "quality_overall"]
AGREEMENT = ["STRONGLY_DISAGREE", "DISAGREE", "SOMEWHAT_DISAGREE", "NEUTRAL", "SOMEWHAT_AGREE",
             "AGREE", "STRONGLY_AGREE"]
QUALITY = ["TERRIBLE_QUALITY", "POOR_QUALITY", "SOMEWHAT_POOR_QUALITY", "NEUTRAL",
           "SOMEWHAT_GOOD_QUALITY", "GOOD_QUALITY", "EXCELLENT_QUALITY"]
S, F, I = pa.string(), pa.float64(), pa.int64()
LS = pa.list_(pa.string())


def write(t, out, name, partition):
    """Writes t as OUT/name/partition=value/... and returns its rows."""
    opts = ds.ParquetFileFormat().make_write_options(compression="zstd", compression_level=1,
                                                     write_statistics=True)
    ds.write_dataset(t, os.path.join(out, name), format="parquet", partitioning=[partition],
                     partitioning_flavor="hive", file_options=opts, max_rows_per_group=65536,
                     existing_data_behavior="overwrite_or_ignore")
    return t.num_rows


def ndjson(path, schema):
    """Reads gzip JSON Lines with an explicit schema (keys missing from the file are null)."""
    opts = pjson.ParseOptions(explicit_schema=pa.schema(schema), unexpected_field_behavior="ignore")
    t = pjson.read_json(pa.input_stream(path, compression="gzip"), parse_options=opts)
    for name, typ in schema:
        if name not in t.column_names:
            t = t.append_column(name, pa.nulls(t.num_rows, typ))
    try:
        return t.combine_chunks()
    except pa.ArrowInvalid:
        # Past 2 GiB of text in one column (CrowdRAG-25's sources at 50x) the 32-bit
        # offsets of one chunk overflow: hold the texts with 64-bit offsets instead.
        return t.cast(pa.schema([(f.name, large(f.type)) for f in t.schema])).combine_chunks()


def large(typ):
    """typ with its strings as large strings (64-bit offsets), through lists and structs."""
    if pa.types.is_string(typ):
        return pa.large_string()
    if pa.types.is_list(typ):
        return pa.list_(large(typ.value_type))
    if pa.types.is_struct(typ):
        return pa.struct([(f.name, large(f.type)) for f in typ])
    return typ


def arr(c):
    return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c


def list_map(lst, fn):
    """Applies fn to a list column's values, keeping its offsets and nulls."""
    lst = arr(lst)
    return pa.ListArray.from_arrays(lst.offsets, fn(lst.values), mask=lst.is_null())


def count_equal(lst, value):
    lst = arr(lst)
    hit = pc.equal(pc.list_flatten(lst), value).to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(lst).to_numpy()
    return pa.array(np.bincount(parents[np.nan_to_num(hit).astype(bool)], minlength=len(lst)).astype(np.int64))


def explode(t, lists, index_name, keep):
    """One row per element of the aligned list columns, with the element's index."""
    first = arr(t[lists[0]])
    parents = pc.list_parent_indices(first)
    offsets = first.offsets.to_numpy()
    pidx = parents.to_numpy()
    cols = {k: t[k].take(parents) for k in keep}
    cols[index_name] = pa.array(np.arange(len(pidx), dtype=np.int64) - (offsets[pidx] - offsets[0]))
    for c in lists:
        cols[c] = pc.list_flatten(arr(t[c]))
    return cols


def pair_key(a, b):
    return pc.if_else(pc.less_equal(a, b), pc.binary_join_element_wise(a, b, "|"),
                      pc.binary_join_element_wise(b, a, "|"))


def occurrence(keys):
    """0, 1, ... per key in input order (keys: list of string arrays)."""
    codes = pc.dictionary_encode(pc.binary_join_element_wise(*keys, "\x00")).combine_chunks() \
        if isinstance(keys[0], pa.ChunkedArray) else pc.dictionary_encode(pc.binary_join_element_wise(*keys, "\x00"))
    idx = codes.indices.to_numpy()
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    start = np.r_[0, np.flatnonzero(np.diff(sidx)) + 1]
    run = np.repeat(start, np.diff(np.r_[start, len(sidx)]))
    occ = np.empty(len(idx), dtype=np.int64)
    occ[order] = np.arange(len(idx)) - run
    return occ, idx


def crowdrag25(data, out):
    d = os.path.join(data, "crowdrag25")
    rows = {}
    st = pa.struct([("text", S), ("citations", LS)])
    resp = ndjson(os.path.join(d, "responses.jsonl.gz"), [
        ("response", S), ("topic", S), ("style", S), ("kind", S), ("query", S), ("references_ids", LS),
        ("references_texts", LS), ("raw_text", S), ("text", S), ("cleaned_text", S), ("statements", pa.list_(st))])
    stmts = resp["statements"].combine_chunks()
    cit_len = pc.list_value_length(pc.struct_field(pc.list_flatten(stmts), "citations")).fill_null(0).to_numpy()
    n_cit = np.bincount(pc.list_parent_indices(stmts).to_numpy(), weights=cit_len, minlength=len(stmts))
    responses = pa.table({
        "response": resp["response"], "topic": resp["topic"], "kind": resp["kind"], "query": resp["query"],
        "references_ids": resp["references_ids"], "references_texts": resp["references_texts"],
        "raw_text": pc.coalesce(resp["raw_text"], resp["text"]), "cleaned_text": resp["cleaned_text"],
        "n_statements": pc.cast(pc.list_value_length(stmts), I),
        "n_citations": pa.array(n_cit.astype(np.int64)),
        "n_words": pc.cast(pc.count_substring_regex(resp["cleaned_text"], r"\S+"), I),
        "style": resp["style"]})
    rows["responses"] = write(responses, out, "responses", "style")

    e = explode(resp, ["statements"], "statement_index", ["response", "topic", "style", "kind"])
    s = e["statements"]
    cits = pc.struct_field(s, "citations")
    statements = pa.table({"response": e["response"], "topic": e["topic"], "kind": e["kind"],
                           "statement_index": e["statement_index"], "text": pc.struct_field(s, "text"),
                           "citations": cits, "n_citations": pc.cast(pc.list_value_length(cits), I),
                           "style": e["style"]})
    rows["statements"] = write(statements, out, "statements", "style")
    del resp, responses, statements, e

    schema = [("submission_id", S), ("query_id", S), ("response_a", S), ("response_b", S), ("worker", LS)]
    for dm in DIMS:
        schema += [(f"{dm}_vote", LS), (f"{dm}_spam_probability", pa.list_(F)), (f"{dm}_p_a", F),
                   (f"{dm}_p_n", F), (f"{dm}_p_b", F), (f"{dm}_gold", S)]
    rat = ndjson(os.path.join(d, "ratings.jsonl.gz"), schema)
    keys = ["submission_id", "query_id", "response_a", "response_b"]
    long = pa.concat_tables([pa.table({
        **{k: rat[k] for k in keys}, "worker": rat["worker"], "vote": rat[f"{dm}_vote"],
        "spam_probability": rat[f"{dm}_spam_probability"], "p_a": rat[f"{dm}_p_a"], "p_n": rat[f"{dm}_p_n"],
        "p_b": rat[f"{dm}_p_b"], "gold": rat[f"{dm}_gold"], "dimension": pa.array([dm] * rat.num_rows)})
        for dm in DIMS]).combine_chunks()
    votes = list_map(long["vote"], pc.utf8_lower)
    na, nb, nn = (count_equal(votes, v) for v in "abn")
    pk = pair_key(long["response_a"], long["response_b"])
    ratings = pa.table({
        **{k: long[k] for k in keys}, "workers": long["worker"], "votes": votes,
        "spam_probabilities": long["spam_probability"], "p_a": long["p_a"], "p_n": long["p_n"],
        "p_b": long["p_b"], "gold": pc.utf8_lower(long["gold"]), "n_votes_a": na, "n_votes_b": nb,
        "n_votes_n": nn, "has_majority": pc.greater_equal(pc.max_element_wise(na, nb, nn), 3),
        "pair_key": pk, "dimension": long["dimension"]})
    rows["ratings"] = write(ratings, out, "ratings", "dimension")
    del ratings

    e = explode(long, ["worker", "vote", "spam_probability"], "worker_index", keys + ["gold", "dimension"])
    votes_t = pa.table({**{k: e[k] for k in keys}, "gold": pc.utf8_lower(e["gold"]),
                        "worker_index": e["worker_index"], "worker": e["worker"], "vote": pc.utf8_lower(e["vote"]),
                        "spam_probability": e["spam_probability"], "pair_key": pair_key(e["response_a"], e["response_b"]),
                        "dimension": e["dimension"]})
    rows["votes"] = write(votes_t, out, "votes", "dimension")
    del votes_t, e, long, rat

    llm = ndjson(os.path.join(d, "llm_ratings.jsonl.gz"),
                 [("query_id", S), ("response_a", S), ("response_b", S), ("inference", S)] + [(dm, S) for dm in DIMS])
    n = llm.num_rows
    # unpivot in line order: row i of the input gives rows 7i..7i+6
    take = np.repeat(np.arange(n), len(DIMS))
    label = pa.concat_arrays([arr(llm[dm]) for dm in DIMS]).take(
        pa.array(np.arange(len(DIMS) * n).reshape(len(DIMS), n).T.ravel()))
    dim = pa.array(np.tile(np.array(DIMS, dtype=object), n), S)
    base = {k: llm[k].take(pa.array(take)) for k in ["query_id", "response_a", "response_b", "inference"]}
    label = pc.utf8_lower(label)
    occ, codes = occurrence([base["response_a"], base["response_b"], base["inference"], dim])
    lab_codes = pc.dictionary_encode(pc.fill_null(label, "\x00")).indices.to_numpy()
    pairs = np.unique(np.stack([codes, lab_codes], axis=1), axis=0)
    n_labels = np.bincount(pairs[:, 0], minlength=codes.max() + 1 if len(codes) else 0)
    llm_t = pa.table({**base, "label": label, "pair_key": pair_key(base["response_a"], base["response_b"]),
                      "occurrence": pa.array(occ), "conflicting_duplicate": pa.array(n_labels[codes] > 1),
                      "dimension": dim})
    rows["llm_ratings"] = write(llm_t, out, "llm_ratings", "dimension")

    gr = ndjson(os.path.join(d, "grades.jsonl.gz"), [("response", S)] + [(dm, I) for dm in DIMS])
    grades = pa.concat_tables([pa.table({"response": gr["response"], "grade": gr[dm],
                                         "dimension": pa.array([dm] * gr.num_rows)}) for dm in DIMS])
    rows["grades"] = write(grades, out, "grades", "dimension")
    return rows, []


def split_list(values, sep, drop=None, null_empty=False):
    """Python split like agora's: '' gives [] (or null with null_empty), drop leaves out values."""
    out = []
    for v in values:
        if v is None or (null_empty and v == ""):
            out.append(None)
        elif v == "":
            out.append([])
        else:
            out.append([p for p in v.split(sep) if p != drop] if drop is not None else v.split(sep))
    return pa.array(out, LS)


def sql_unquote(s):
    if len(s) < 2 or s[0] != "'" or s[-1] != "'":
        return s
    inner = s[1:-1]
    if "'" in inner.replace("''", ""):
        return s
    return inner.replace("''", "'")


CORRECT = set("AEIOU13579")


def delidata(data, out):
    d = os.path.join(data, "delidata")
    files = sorted(f for f in os.listdir(d) if not f.endswith((".py", ".md", ".txt")) and not f.startswith("."))
    cols = ["group_id", "message_id", "message_type", "origin", "original_text", "clean_text", "annotation_type",
            "annotation_target", "annotation_additional", "team_performance", "performance_change",
            "sol_tracker_message", "sol_tracker_all"]
    conv = pcsv.ConvertOptions(column_types={c: S for c in cols}, strings_can_be_null=False)
    parse = pcsv.ParseOptions(delimiter="\t", quote_char=False)
    t = pa.concat_tables([pcsv.read_csv(os.path.join(d, f), parse_options=parse, convert_options=conv)
                          for f in files]).combine_chunks()
    mt = t["message_type"].to_pylist()
    ot = t["original_text"].to_pylist()
    nullish = lambda c: pc.if_else(pc.is_in(t[c], pa.array(["None", "0", ""])), pa.scalar(None, S), t[c])
    sol = [json.loads(x) if x else None for x in t["sol_tracker_all"].to_pylist()]
    cards = [split_list([o.split("&&")[1] if len(o.split("&&")) > 1 else ""], ",").to_pylist()[0]
             if m == "INITIAL" else None for m, o in zip(mt, ot)]
    seq, gcodes = occurrence([t["group_id"]])
    # fill_down of cards within a group, then the recomputed team performance
    tp = []
    last, last_group = None, None
    for i, (m, c, g) in enumerate(zip(sol, cards, gcodes)):
        if g != last_group:
            last, last_group = None, g
        if c is not None:
            last = c
        if m is None or last is None or len(m) == 0:
            tp.append(None)
            continue
        scores = []
        for sel in m.values():
            sel = set(sel or [])
            scores.append(sum((x in sel) == (x.upper() in CORRECT) for x in last) / len(last) if last else 0.0)
        tp.append(round(sum(scores) / len(scores), 3))
    messages = pa.table({
        "group_id": t["group_id"],
        "message_id": pc.if_else(pc.equal(t["message_id"], "-1"), pa.scalar(None, S), t["message_id"]),
        "origin": t["origin"], "original_text": t["original_text"], "clean_text": t["clean_text"],
        "annotation_type": nullish("annotation_type"), "annotation_target": nullish("annotation_target"),
        "annotation_additional": split_list(t["annotation_additional"].to_pylist(), ",", "0", null_empty=True),
        "team_performance": pc.cast(t["team_performance"], F),
        "performance_change": pc.cast(t["performance_change"], F),
        "sol_tracker_message": split_list(t["sol_tracker_message"].to_pylist(), ","),
        "sol_tracker_all": pa.array([list(x.items()) if x is not None else None for x in sol], pa.map_(S, LS)),
        "text": pa.array([sql_unquote(x) for x in ot], S),
        "participants": split_list([o.split("&&")[0] if m == "INITIAL" else None for m, o in zip(mt, ot)],
                                   ",", "SYSTEM"),
        "cards": pa.array(cards, LS),
        "submitted_cards": split_list([o if m == "SUBMIT" else None for m, o in zip(mt, ot)], ","),
        "seq": pa.array(seq), "team_performance_recomputed": pa.array(tp, F),
        "message_type": t["message_type"]})
    return {"messages": write(messages, out, "messages", "message_type")}, ["groups"]


def snake(name):
    return name.replace(".", "_")


def enum_value(a, values):
    return pc.cast(pc.add(pc.index_in(a, value_set=pa.array(values)), 1), I)


def habermas(data, out):
    d = os.path.join(data, "habermas")
    rows = {}
    comparisons_cols = [
        "metadata.id", "round_id", "launch_id", "iteration_id", "iteration_index", "metadata.task_duration",
        "metadata.response_duration", "metadata.participant_id", "metadata.created", "metadata.updated",
        "metadata.status", "metadata.provenance", "worker_id", "monotonic_timestamp", "question.id",
        "question.text", "question.affirming_statement", "question.negating_statement", "question.topic",
        "question.split", "own_opinion.text", "own_opinion.metadata.id", "own_opinion.metadata.provenance",
        "critique.text", "critique.metadata.id", "critique.metadata.provenance", "top_candidate.text",
        "top_candidate.metadata.id", "top_candidate.metadata.provenance",
        "top_candidate.metadata.generative_model.api_version", "candidates.metadata.id",
        "candidates.text", "candidates.metadata.provenance", "candidates.display_label",
        "candidates.reward_data.reward_predictions", "candidates.parent_statement_ids", "rankings.candidate_ids",
        "rankings.numerical_ranks", "rankings.metadata.status", "ratings.agreement", "ratings.quality",
        "other_opinions.text", "other_opinions.metadata.id", "other_opinions.metadata.provenance",
        "other_opinions.metadata.participant_id", "metadata.version"]
    ts = pa.timestamp("us", tz="UTC")
    t = pq.read_table(os.path.join(d, "hm_all_candidate_comparisons.parquet"), columns=comparisons_cols)
    cols = {}
    for c in comparisons_cols:
        v = t[c]
        if c == "metadata.created":
            v = pc.cast(v, ts)
        elif c == "metadata.updated":
            v = pc.cast(pc.cast(v, pa.timestamp("ns", tz="UTC")), ts)
        cols[snake(c)] = v
    # declared optional in pipeline.yaml; the generator writes none
    cols["top_candidate_metadata_reward_model_api_version"] = pa.nulls(t.num_rows, pa.string())
    rows["comparisons"] = write(pa.table(cols), out, "comparisons", "metadata_version")
    del cols

    keep = ["metadata.id", "round_id", "launch_id", "iteration_index", "metadata.participant_id",
            "metadata.status", "worker_id", "question.id", "question.split", "question.topic",
            "rankings.metadata.status", "own_opinion.metadata.provenance", "metadata.version"]
    lists = ["candidates.metadata.id", "candidates.text", "candidates.metadata.provenance",
             "candidates.display_label", "ratings.agreement", "ratings.quality"]
    # rank matched by candidate id, per row (Python: pyarrow has no list lookup by key)
    ranks = []
    for cands, ids, nums in zip(t["candidates.metadata.id"].to_pylist(), t["rankings.candidate_ids"].to_pylist(),
                                t["rankings.numerical_ranks"].to_pylist()):
        if cands is None:
            ranks.append(None)
            continue
        m = {}
        if ids is not None and nums is not None:
            for k, v in zip(ids, nums):
                m.setdefault(k, v)
        ranks.append([m.get(c) for c in cands])
    t2 = t.select(keep + lists).append_column("rank", pa.array(ranks, pa.list_(I)))
    e = explode(t2, lists + ["rank"], "candidate_index", keep)
    agreement, quality, rank = e["ratings.agreement"], e["ratings.quality"], e["rank"]
    is_mock = pc.or_(pc.or_(pc.fill_null(pc.equal(agreement, "MOCK"), False),
                            pc.fill_null(pc.equal(quality, "MOCK"), False)),
                     pc.fill_null(pc.equal(rank, -1), False))
    candidate_ratings = pa.table({
        **{snake(k): e[k] for k in keep if k != "metadata.version"},
        "candidate_index": e["candidate_index"], "candidate_id": e["candidates.metadata.id"],
        "candidate_text": e["candidates.text"], "candidate_provenance": e["candidates.metadata.provenance"],
        "display_label": e["candidates.display_label"], "rank": rank, "agreement": agreement, "quality": quality,
        "agreement_value": enum_value(agreement, AGREEMENT), "quality_value": enum_value(quality, QUALITY),
        "is_mock": is_mock, "metadata_version": e["metadata.version"]})
    rows["candidate_ratings"] = write(candidate_ratings, out, "candidate_ratings", "metadata_version")
    del candidate_ratings, e, t2

    okeep = ["metadata.id", "round_id", "launch_id", "iteration_index", "metadata.participant_id", "question.id",
             "metadata.version"]
    olists = {"other_opinions.text": "text", "other_opinions.metadata.id": "opinion_id",
              "other_opinions.metadata.provenance": "provenance",
              "other_opinions.metadata.participant_id": "participant_id"}
    e = explode(t, list(olists), "opinion_index", okeep)
    other = pa.table({**{snake(k): e[k] for k in okeep if k != "metadata.version"},
                      "opinion_index": e["opinion_index"], **{v: e[k] for k, v in olists.items()},
                      "metadata_version": e["metadata.version"]})
    rows["other_opinions"] = write(other, out, "other_opinions", "metadata_version")
    del other, e, t

    pcols = ["launch_id", "metadata.id", "metadata.participant_id", "metadata.created", "metadata.status",
             "worker_id", "question.id", "question.split", "question.topic", "question_index", "rating_index",
             "ratings.metadata.id", "ratings.metadata.created",
             "metadata.version"]
    p = pq.read_table(os.path.join(d, "hm_all_position_statement_ratings.parquet"),
                      columns=pcols + ["ratings.agreement"])
    e = explode(p, ["ratings.agreement"], "_i", pcols)
    ag = e["ratings.agreement"]
    position = pa.table({**{snake(k): (pc.cast(e[k], ts) if k in ("metadata.created", "ratings.metadata.created")
                                       else e[k])
                            for k in pcols if k != "metadata.version"},
                         "agreement": ag, "agreement_value": enum_value(ag, AGREEMENT),
                         "is_mock": pc.fill_null(pc.equal(ag, "MOCK"), False),
                         "metadata_version": e["metadata.version"]})
    rows["position_ratings"] = write(position, out, "position_ratings", "metadata_version")
    return rows, ["round_outcomes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True, choices=["crowdrag25", "delidata", "habermas"])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    pa.set_cpu_count(a.threads)
    pa.set_io_thread_count(a.threads)
    rows, missing = {"crowdrag25": crowdrag25, "delidata": delidata, "habermas": habermas}[a.dataset](a.data, a.out)
    print(json.dumps({"tables": rows, "missing": missing}), flush=True)
    # pyarrow 26 sometimes aborts in its thread pools' teardown at interpreter exit
    # ("terminate called without an active exception", about 1 run in 8 on DeliData) after
    # all the work is done and written; skip the teardown.
    os._exit(0)


if __name__ == "__main__":
    main()
