-- Habermas Machine: four of the five tables of pipeline.yaml's habermas dataset, in DuckDB SQL.
-- {{data}} is the --data root and {{out}} the output folder (filled in by bench/cmd/compare).
-- Not reproduced: round_outcomes (a Schulze winner per round), agora's validate rules,
-- its manifest, dataset card and read-back checks.

-- table: comparisons
COPY (
  SELECT "metadata.id" AS metadata_id, round_id, launch_id, iteration_id, iteration_index,
         "metadata.task_duration" AS metadata_task_duration, "metadata.response_duration" AS metadata_response_duration,
         "metadata.participant_id" AS metadata_participant_id,
         "metadata.created"::TIMESTAMPTZ AS metadata_created, "metadata.updated"::TIMESTAMPTZ AS metadata_updated,
         "metadata.status" AS metadata_status, "metadata.provenance" AS metadata_provenance, worker_id, monotonic_timestamp,
         "question.id" AS question_id, "question.text" AS question_text,
         "question.affirming_statement" AS question_affirming_statement,
         "question.negating_statement" AS question_negating_statement,
         "question.topic" AS question_topic, "question.split" AS question_split,
         "own_opinion.text" AS own_opinion_text, "own_opinion.metadata.id" AS own_opinion_metadata_id,
         "own_opinion.metadata.provenance" AS own_opinion_metadata_provenance,
         "critique.text" AS critique_text, "critique.metadata.id" AS critique_metadata_id,
         "critique.metadata.provenance" AS critique_metadata_provenance,
         "top_candidate.text" AS top_candidate_text, "top_candidate.metadata.id" AS top_candidate_metadata_id,
         "top_candidate.metadata.provenance" AS top_candidate_metadata_provenance,
         "top_candidate.metadata.generative_model.api_version" AS top_candidate_metadata_generative_model_api_version,
         NULL::VARCHAR AS top_candidate_metadata_reward_model_api_version, -- declared optional; the generator writes none
         "candidates.metadata.id" AS candidates_metadata_id, "candidates.text" AS candidates_text,
         "candidates.metadata.provenance" AS candidates_metadata_provenance,
         "candidates.display_label" AS candidates_display_label,
         "candidates.reward_data.reward_predictions" AS candidates_reward_data_reward_predictions,
         "candidates.parent_statement_ids" AS candidates_parent_statement_ids,
         "rankings.candidate_ids" AS rankings_candidate_ids, "rankings.numerical_ranks" AS rankings_numerical_ranks,
         "rankings.metadata.status" AS rankings_metadata_status,
         "ratings.agreement" AS ratings_agreement, "ratings.quality" AS ratings_quality,
         "other_opinions.text" AS other_opinions_text, "other_opinions.metadata.id" AS other_opinions_metadata_id,
         "other_opinions.metadata.provenance" AS other_opinions_metadata_provenance,
         "other_opinions.metadata.participant_id" AS other_opinions_metadata_participant_id,
         "metadata.version" AS metadata_version
  FROM read_parquet('{{data}}/habermas/hm_all_candidate_comparisons.parquet')
) TO '{{out}}/comparisons' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (metadata_version));

-- table: candidate_ratings
COPY (
  WITH e AS (
    SELECT "metadata.id" AS metadata_id, round_id, launch_id, iteration_index,
           "metadata.participant_id" AS metadata_participant_id, "metadata.version" AS metadata_version,
           "metadata.status" AS metadata_status, worker_id, "question.id" AS question_id,
           "question.split" AS question_split, "question.topic" AS question_topic,
           "rankings.metadata.status" AS rankings_metadata_status,
           "own_opinion.metadata.provenance" AS own_opinion_metadata_provenance,
           unnest(range(len("candidates.metadata.id")::BIGINT)) AS candidate_index,
           unnest("candidates.metadata.id") AS candidate_id,
           unnest("candidates.text") AS candidate_text,
           unnest("candidates.metadata.provenance") AS candidate_provenance,
           unnest("candidates.display_label") AS display_label,
           unnest(list_transform("candidates.metadata.id",
                  c -> "rankings.numerical_ranks"[list_position("rankings.candidate_ids", c)])) AS "rank",
           unnest("ratings.agreement") AS agreement,
           unnest("ratings.quality") AS quality
    FROM read_parquet('{{data}}/habermas/hm_all_candidate_comparisons.parquet'))
  SELECT metadata_id, round_id, launch_id, iteration_index, metadata_participant_id, metadata_status, worker_id,
         question_id, question_split, question_topic, rankings_metadata_status, own_opinion_metadata_provenance,
         candidate_index, candidate_id, candidate_text, candidate_provenance, display_label, "rank",
         agreement, quality,
         list_position(['STRONGLY_DISAGREE', 'DISAGREE', 'SOMEWHAT_DISAGREE', 'NEUTRAL', 'SOMEWHAT_AGREE', 'AGREE', 'STRONGLY_AGREE'], agreement)::BIGINT AS agreement_value,
         list_position(['TERRIBLE_QUALITY', 'POOR_QUALITY', 'SOMEWHAT_POOR_QUALITY', 'NEUTRAL', 'SOMEWHAT_GOOD_QUALITY', 'GOOD_QUALITY', 'EXCELLENT_QUALITY'], quality)::BIGINT AS quality_value,
         coalesce(agreement = 'MOCK', false) OR coalesce(quality = 'MOCK', false) OR coalesce("rank" = -1, false) AS is_mock,
         metadata_version
  FROM e
) TO '{{out}}/candidate_ratings' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (metadata_version));

-- table: other_opinions
COPY (
  SELECT "metadata.id" AS metadata_id, round_id, launch_id, iteration_index,
         "metadata.participant_id" AS metadata_participant_id, "question.id" AS question_id,
         unnest(range(len("other_opinions.text")::BIGINT)) AS opinion_index,
         unnest("other_opinions.text") AS "text",
         unnest("other_opinions.metadata.id") AS opinion_id,
         unnest("other_opinions.metadata.provenance") AS provenance,
         unnest("other_opinions.metadata.participant_id") AS participant_id,
         "metadata.version" AS metadata_version
  FROM read_parquet('{{data}}/habermas/hm_all_candidate_comparisons.parquet')
) TO '{{out}}/other_opinions' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (metadata_version));

-- table: position_ratings
COPY (
  SELECT launch_id, metadata_id, metadata_participant_id, metadata_created, metadata_status, worker_id, question_id,
         question_split, question_topic, question_index, rating_index, ratings_metadata_id, ratings_metadata_created, agreement,
         list_position(['STRONGLY_DISAGREE', 'DISAGREE', 'SOMEWHAT_DISAGREE', 'NEUTRAL', 'SOMEWHAT_AGREE', 'AGREE', 'STRONGLY_AGREE'], agreement)::BIGINT AS agreement_value,
         coalesce(agreement = 'MOCK', false) AS is_mock,
         metadata_version
  FROM (
    SELECT launch_id, "metadata.id" AS metadata_id, "metadata.participant_id" AS metadata_participant_id,
           "metadata.created"::TIMESTAMPTZ AS metadata_created, "metadata.status" AS metadata_status, worker_id,
           "question.id" AS question_id, "question.split" AS question_split, "question.topic" AS question_topic,
           question_index, rating_index, "ratings.metadata.id" AS ratings_metadata_id,
           "ratings.metadata.created"::TIMESTAMPTZ AS ratings_metadata_created,
           unnest("ratings.agreement") AS agreement, "metadata.version" AS metadata_version
    FROM read_parquet('{{data}}/habermas/hm_all_position_statement_ratings.parquet'))
) TO '{{out}}/position_ratings' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (metadata_version));
