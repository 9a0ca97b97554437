"""polars conversions of agora's tables, for `bench/cmd/compare`.

    python polars_convert.py --dataset crowdrag25 --data DIR --out DIR --threads 2

Writes the tables as Hive-partitioned Parquet (zstd level 1, 65,536-row row groups) and
prints {"tables": {name: rows}, "missing": [...]} as the last stdout line. agora's validate
rules, manifest and dataset card are not reproduced (the generated inputs are valid).
Set POLARS_MAX_THREADS before starting Python; the bench does.
"""

import argparse
import gzip
import json
import os
import sys

import polars as pl

DIMS = ["correctness_topical", "coherence_logical", "coherence_stylistic", "coverage_broad",
        "coverage_deep", "consistency_internal", "quality_overall"]
AGREEMENT = ["STRONGLY_DISAGREE", "DISAGREE", "SOMEWHAT_DISAGREE", "NEUTRAL", "SOMEWHAT_AGREE",
             "AGREE", "STRONGLY_AGREE"]
QUALITY = ["TERRIBLE_QUALITY", "POOR_QUALITY", "SOMEWHAT_POOR_QUALITY", "NEUTRAL",
           "SOMEWHAT_GOOD_QUALITY", "GOOD_QUALITY", "EXCELLENT_QUALITY"]
S, F, I = pl.String, pl.Float64, pl.Int64
LS = pl.List(pl.String)


def write(df, out, name, partition):
    """Writes df as OUT/name/partition=value/... and returns its rows."""
    path = os.path.join(out, name)
    os.makedirs(path, exist_ok=True)
    df.write_parquet(path, compression="zstd", compression_level=1, row_group_size=65536,
                     statistics=True, partition_by=partition)
    return df.height


def ndjson(path, schema):
    with gzip.open(path, "rb") as f:
        return pl.read_ndjson(f.read(), schema=schema)


def pair_key():
    a, b = pl.col("response_a"), pl.col("response_b")
    return pl.when(a <= b).then(a + "|" + b).otherwise(b + "|" + a).alias("pair_key")


def crowdrag25(data, out):
    d = os.path.join(data, "crowdrag25")
    rows = {}
    resp = ndjson(os.path.join(d, "responses.jsonl.gz"), {
        "response": S, "topic": S, "style": S, "kind": S, "query": S, "references_ids": LS,
        "references_texts": LS, "raw_text": S, "text": S, "cleaned_text": S,
        "statements": pl.List(pl.Struct({"text": S, "citations": LS}))})
    responses = resp.select(
        "response", "topic", "kind", "query", "references_ids", "references_texts",
        pl.coalesce("raw_text", "text").alias("raw_text"), "cleaned_text",
        pl.col("statements").list.len().cast(I).alias("n_statements"),
        pl.col("statements").list.eval(pl.element().struct.field("citations").list.len())
        .list.sum().fill_null(0).cast(I).alias("n_citations"),
        pl.col("cleaned_text").str.count_matches(r"\S+").cast(I).alias("n_words"),
        "style")
    rows["responses"] = write(responses, out, "responses", "style")

    statements = (resp.select("response", "topic", "style", "kind", "statements")
                  .filter(pl.col("statements").list.len() > 0)
                  .with_columns(pl.int_ranges(0, pl.col("statements").list.len()).alias("statement_index"))
                  .explode(["statements", "statement_index"])
                  .unnest("statements")
                  .select("response", "topic", "kind", pl.col("statement_index").cast(I), "text", "citations",
                          pl.col("citations").list.len().cast(I).alias("n_citations"), "style"))
    rows["statements"] = write(statements, out, "statements", "style")
    del resp, responses, statements

    schema = {"submission_id": S, "query_id": S, "response_a": S, "response_b": S, "worker": LS}
    for dm in DIMS:
        schema.update({f"{dm}_vote": LS, f"{dm}_spam_probability": pl.List(F), f"{dm}_p_a": F,
                       f"{dm}_p_n": F, f"{dm}_p_b": F, f"{dm}_gold": S})
    rat = ndjson(os.path.join(d, "ratings.jsonl.gz"), schema)
    keys = ["submission_id", "query_id", "response_a", "response_b"]
    long = pl.concat([rat.select(*keys, pl.col("worker"), pl.col(f"{dm}_vote").alias("vote"),
                                 pl.col(f"{dm}_spam_probability").alias("spam_probability"),
                                 pl.col(f"{dm}_p_a").alias("p_a"), pl.col(f"{dm}_p_n").alias("p_n"),
                                 pl.col(f"{dm}_p_b").alias("p_b"), pl.col(f"{dm}_gold").alias("gold"),
                                 pl.lit(dm).alias("dimension"))
                      for dm in DIMS])
    votes_l = pl.col("votes").list.eval(pl.element().str.to_lowercase())
    ratings = (long.rename({"worker": "workers", "vote": "votes", "spam_probability": "spam_probabilities"})
               .with_columns(votes_l.alias("votes"), pl.col("gold").str.to_lowercase())
               .with_columns(*[pl.col("votes").list.count_matches(v).cast(I).alias(f"n_votes_{v}") for v in "abn"])
               .with_columns((pl.max_horizontal("n_votes_a", "n_votes_b", "n_votes_n") >= 3).alias("has_majority"),
                             pair_key())
               .select(*keys, "workers", "votes", "spam_probabilities", "p_a", "p_n", "p_b", "gold",
                       "n_votes_a", "n_votes_b", "n_votes_n", "has_majority", "pair_key", "dimension"))
    rows["ratings"] = write(ratings, out, "ratings", "dimension")
    del ratings

    votes = (long.select(*keys, "gold", "dimension", "worker", "vote", "spam_probability")
             .filter(pl.col("worker").list.len() > 0)
             .with_columns(pl.int_ranges(0, pl.col("worker").list.len()).alias("worker_index"))
             .explode(["worker", "vote", "spam_probability", "worker_index"])
             .select(*keys, pl.col("gold").str.to_lowercase(), pl.col("worker_index").cast(I), "worker",
                     pl.col("vote").str.to_lowercase(), "spam_probability", pair_key(), "dimension"))
    rows["votes"] = write(votes, out, "votes", "dimension")
    del votes, long, rat

    llm = ndjson(os.path.join(d, "llm_ratings.jsonl.gz"),
                 {"query_id": S, "response_a": S, "response_b": S, "inference": S, **{dm: S for dm in DIMS}})
    llm = llm.with_row_index("line")
    k = ["response_a", "response_b", "inference", "dimension"]
    llm_long = (pl.concat([llm.select("line", "query_id", "response_a", "response_b", "inference",
                                      pl.col(dm).str.to_lowercase().alias("label"), pl.lit(dm).alias("dimension"))
                           for dm in DIMS])
                .sort("line", maintain_order=True)
                .select("query_id", "response_a", "response_b", "inference", "label", pair_key(),
                        pl.int_range(pl.len()).over(k).cast(I).alias("occurrence"),
                        (pl.col("label").fill_null("\x00").n_unique().over(k) > 1).alias("conflicting_duplicate"),
                        "dimension"))
    rows["llm_ratings"] = write(llm_long, out, "llm_ratings", "dimension")

    gr = ndjson(os.path.join(d, "grades.jsonl.gz"), {"response": S, **{dm: I for dm in DIMS}})
    grades = pl.concat([gr.select("response", pl.col(dm).alias("grade"), pl.lit(dm).alias("dimension"))
                        for dm in DIMS])
    rows["grades"] = write(grades, out, "grades", "dimension")
    return rows, []


def delidata(data, out):
    d = os.path.join(data, "delidata")
    files = sorted(os.path.join(d, f) for f in os.listdir(d)
                   if not f.endswith((".py", ".md", ".txt")) and not f.startswith("."))
    cols = ["group_id", "message_id", "message_type", "origin", "original_text", "clean_text", "annotation_type",
            "annotation_target", "annotation_additional", "team_performance", "performance_change",
            "sol_tracker_message", "sol_tracker_all"]
    raw = pl.read_csv(files, separator="\t", quote_char=None, schema={c: S for c in cols},
                      empty_string_is_null=False).with_row_index("line")
    ot = pl.col("original_text").fill_null("")

    def split(e, drop=None):
        lst = e.str.split(",")
        if drop is not None:
            lst = lst.list.filter(pl.element() != drop)
        return pl.when(e.is_null()).then(None).when(e == "").then(pl.lit([], LS)).otherwise(lst)

    inner = ot.str.slice(1, ot.str.len_chars() - 2)
    unquote = (pl.when((ot.str.len_chars() >= 2) & ot.str.starts_with("'") & ot.str.ends_with("'")
                       & ~inner.str.replace_all("''", "", literal=True).str.contains("'", literal=True))
               .then(inner.str.replace_all("''", "'", literal=True)).otherwise(ot))
    initial = pl.col("message_type") == "INITIAL"
    nullish = lambda c: pl.when(pl.col(c).is_in(["None", "0", ""])).then(None).otherwise(pl.col(c)).alias(c)
    p = raw.select(
        "line", "group_id",
        pl.when(pl.col("message_id") == "-1").then(None).otherwise(pl.col("message_id")).alias("message_id"),
        "message_type", "origin", ot.alias("original_text"), pl.col("clean_text").fill_null(""),
        nullish("annotation_type"), nullish("annotation_target"),
        split(pl.when(pl.col("annotation_additional") == "").then(None).otherwise(pl.col("annotation_additional")),
              "0").alias("annotation_additional"),
        pl.col("team_performance").cast(F), pl.col("performance_change").cast(F),
        split(pl.col("sol_tracker_message").fill_null("")).alias("sol_tracker_message"),
        pl.when(pl.col("sol_tracker_all") == "").then(None).otherwise(pl.col("sol_tracker_all"))
        .str.json_decode(pl.Map(S, LS)).alias("sol_tracker_all"),
        unquote.alias("text"),
        pl.when(initial).then(split(ot.str.split("&&").list.get(0, null_on_oob=True).fill_null(""), "SYSTEM"))
        .alias("participants"),
        pl.when(initial).then(split(ot.str.split("&&").list.get(1, null_on_oob=True).fill_null("")))
        .alias("cards"),
        pl.when(pl.col("message_type") == "SUBMIT").then(split(ot)).alias("submitted_cards"),
    )
    p = p.with_columns(pl.int_range(pl.len()).over("group_id").cast(I).alias("seq"),
                       pl.col("cards").forward_fill().over("group_id").alias("group_cards"))
    # team_performance recomputed: mean over participants of the share of cards they have right.
    scored = (p.select("line", "sol_tracker_all", "group_cards")
              .filter(pl.col("sol_tracker_all").map.len() > 0, pl.col("group_cards").is_not_null())
              .with_columns(pl.col("sol_tracker_all").map.values().alias("sel"))
              .explode("sel")
              .with_columns(pl.col("sel").fill_null(pl.lit([], LS)))
              .with_row_index("pid")
              .explode("group_cards")
              .filter(pl.col("group_cards").is_not_null())
              .with_columns(right=(pl.col("sel").list.contains(pl.col("group_cards"))
                                   == pl.col("group_cards").str.to_uppercase().is_in(list("AEIOU13579"))))
              .group_by("line", "pid").agg(pl.col("right").mean())
              .group_by("line").agg(pl.col("right").mean().round(3, mode="half_to_even")
                                    .alias("team_performance_recomputed")))
    messages = (p.join(scored, on="line", how="left").sort("line")
                .select("group_id", "message_id", "origin", "original_text", "clean_text", "annotation_type",
                        "annotation_target", "annotation_additional", "team_performance", "performance_change",
                        "sol_tracker_message", "sol_tracker_all", "text", "participants", "cards",
                        "submitted_cards", "seq", "team_performance_recomputed", "message_type"))
    return {"messages": write(messages, out, "messages", "message_type")}, ["groups"]


def snake(name):
    return name.replace(".", "_")


def habermas(data, out):
    d = os.path.join(data, "habermas")
    cmp_path = os.path.join(d, "hm_all_candidate_comparisons.parquet")
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
    ts = pl.Datetime("us", "UTC")
    df = pl.read_parquet(cmp_path, columns=comparisons_cols)
    comparisons = df.select(
        *[(pl.col(c).cast(ts) if c == "metadata.created" else
           pl.col(c).str.to_datetime(time_unit="us", time_zone="UTC") if c == "metadata.updated" else
           pl.col(c)).alias(snake(c)) for c in comparisons_cols],
        # declared optional in pipeline.yaml; the generator writes none
        pl.lit(None, dtype=pl.String).alias("top_candidate_metadata_reward_model_api_version"))
    rows["comparisons"] = write(comparisons, out, "comparisons", "metadata_version")
    del comparisons

    keep = ["metadata.id", "round_id", "launch_id", "iteration_index", "metadata.participant_id",
            "metadata.status", "worker_id", "question.id", "question.split", "question.topic",
            "rankings.metadata.status", "own_opinion.metadata.provenance"]
    lists = {"candidates.metadata.id": "candidate_id", "candidates.text": "candidate_text",
             "candidates.metadata.provenance": "candidate_provenance",
             "candidates.display_label": "display_label", "ratings.agreement": "agreement",
             "ratings.quality": "quality"}
    c = (df.select(*keep, "metadata.version", *lists, "rankings.candidate_ids", "rankings.numerical_ranks")
         .with_row_index("row")
         .filter(pl.col("candidates.metadata.id").list.len() > 0)
         .with_columns(pl.int_ranges(0, pl.col("candidates.metadata.id").list.len()).alias("candidate_index"))
         .explode([*lists, "candidate_index"]))
    # rank matched by candidate id: explode the rankings and join on (row, id)
    rk = (df.with_row_index("row").select("row", "rankings.candidate_ids", "rankings.numerical_ranks")
          .filter(pl.col("rankings.candidate_ids").list.len() > 0)
          .explode(["rankings.candidate_ids", "rankings.numerical_ranks"])
          .unique(["row", "rankings.candidate_ids"], keep="first", maintain_order=True)
          .rename({"rankings.candidate_ids": "candidates.metadata.id", "rankings.numerical_ranks": "rank"}))
    c = c.join(rk, on=["row", "candidates.metadata.id"], how="left", maintain_order="left")
    enum_value = lambda col, values: (pl.col(col).replace_strict(values, list(range(1, 8)), default=None,
                                                                 return_dtype=I))
    candidate_ratings = c.select(
        *[pl.col(k).alias(snake(k)) for k in keep],
        pl.col("candidate_index").cast(I), *[pl.col(k).alias(v) for k, v in lists.items() if k not in
                                              ("ratings.agreement", "ratings.quality")],
        pl.col("rank"), pl.col("ratings.agreement").alias("agreement"), pl.col("ratings.quality").alias("quality"),
        enum_value("ratings.agreement", AGREEMENT).alias("agreement_value"),
        enum_value("ratings.quality", QUALITY).alias("quality_value"),
        ((pl.col("ratings.agreement") == "MOCK").fill_null(False) | (pl.col("ratings.quality") == "MOCK")
         .fill_null(False) | (pl.col("rank") == -1).fill_null(False)).alias("is_mock"),
        pl.col("metadata.version").alias("metadata_version"))
    rows["candidate_ratings"] = write(candidate_ratings, out, "candidate_ratings", "metadata_version")
    del candidate_ratings, c, rk

    olists = {"other_opinions.text": "text", "other_opinions.metadata.id": "opinion_id",
              "other_opinions.metadata.provenance": "provenance",
              "other_opinions.metadata.participant_id": "participant_id"}
    okeep = ["metadata.id", "round_id", "launch_id", "iteration_index", "metadata.participant_id", "question.id"]
    other = (df.select(*okeep, "metadata.version", *olists)
             .filter(pl.col("other_opinions.text").list.len() > 0)
             .with_columns(pl.int_ranges(0, pl.col("other_opinions.text").list.len()).alias("opinion_index"))
             .explode([*olists, "opinion_index"])
             .select(*[pl.col(k).alias(snake(k)) for k in okeep], pl.col("opinion_index").cast(I),
                     *[pl.col(k).alias(v) for k, v in olists.items()],
                     pl.col("metadata.version").alias("metadata_version")))
    rows["other_opinions"] = write(other, out, "other_opinions", "metadata_version")
    del other, df

    pcols = ["launch_id", "metadata.id", "metadata.participant_id", "metadata.created", "metadata.status",
             "worker_id", "question.id", "question.split", "question.topic", "question_index", "rating_index",
             "ratings.metadata.id", "ratings.metadata.created"]
    pr = pl.read_parquet(os.path.join(d, "hm_all_position_statement_ratings.parquet"),
                         columns=[*pcols, "ratings.agreement", "metadata.version"])
    position = (pr.filter(pl.col("ratings.agreement").list.len() > 0)
                .explode("ratings.agreement")
                .select(*[(pl.col(k).cast(ts) if k in ("metadata.created", "ratings.metadata.created")
                           else pl.col(k)).alias(snake(k))
                          for k in pcols],
                        pl.col("ratings.agreement").alias("agreement"),
                        enum_value("ratings.agreement", AGREEMENT).alias("agreement_value"),
                        (pl.col("ratings.agreement") == "MOCK").fill_null(False).alias("is_mock"),
                        pl.col("metadata.version").alias("metadata_version")))
    rows["position_ratings"] = write(position, out, "position_ratings", "metadata_version")
    return rows, ["round_outcomes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True, choices=["crowdrag25", "delidata", "habermas"])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    if os.environ.get("POLARS_MAX_THREADS") != str(a.threads):
        print(f"warning: POLARS_MAX_THREADS is {os.environ.get('POLARS_MAX_THREADS')}, not {a.threads}",
              file=sys.stderr)
    rows, missing = {"crowdrag25": crowdrag25, "delidata": delidata, "habermas": habermas}[a.dataset](a.data, a.out)
    print(json.dumps({"tables": rows, "missing": missing}))


if __name__ == "__main__":
    main()
