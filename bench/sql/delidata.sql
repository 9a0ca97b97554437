-- DeliData: the messages table of pipeline.yaml's delidata dataset, in DuckDB SQL.
-- {{data}} is the --data root and {{out}} the output folder (filled in by bench/cmd/compare).
-- Not reproduced: the groups table (an aggregate with an order-keeping union), agora's
-- validate rules and flagged checks, its manifest, dataset card and read-back checks.

-- table: messages
COPY (
  WITH raw AS (
    -- agora reads an empty TSV field as an empty string, DuckDB as NULL
    SELECT * REPLACE (coalesce(original_text, '') AS original_text, coalesce(clean_text, '') AS clean_text,
                      coalesce(sol_tracker_message, '') AS sol_tracker_message),
           row_number() OVER () AS line
    FROM read_csv('{{data}}/delidata/*-*-*-*-*', delim = '\t', header = true, quote = '', escape = '',
                  all_varchar = true, filename = false)),
  p AS (
    SELECT group_id, nullif(message_id, '-1') AS message_id, message_type, origin, original_text, clean_text,
           CASE WHEN annotation_type IN ('None', '0', '') THEN NULL ELSE annotation_type END AS annotation_type,
           CASE WHEN annotation_target IN ('None', '0', '') THEN NULL ELSE annotation_target END AS annotation_target,
           CASE WHEN annotation_additional IS NULL OR annotation_additional = '' THEN NULL
                ELSE list_filter(string_split(annotation_additional, ','), x -> x <> '0') END AS annotation_additional,
           team_performance::DOUBLE AS team_performance,
           performance_change::DOUBLE AS performance_change,
           CASE WHEN sol_tracker_message IS NULL THEN NULL WHEN sol_tracker_message = '' THEN []::VARCHAR[]
                ELSE string_split(sol_tracker_message, ',') END AS sol_tracker_message,
           CASE WHEN sol_tracker_all = '' THEN NULL
                ELSE sol_tracker_all::JSON::MAP(VARCHAR, VARCHAR[]) END AS sol_tracker_all,
           CASE WHEN len(original_text) >= 2 AND starts_with(original_text, '''') AND ends_with(original_text, '''')
                     AND NOT contains(replace(original_text[2:-2], '''''', ''), '''')
                THEN replace(original_text[2:-2], '''''', '''') ELSE original_text END AS "text",
           CASE WHEN message_type = 'INITIAL' THEN
                  CASE WHEN coalesce(split_part(original_text, '&&', 1), '') = '' THEN []::VARCHAR[]
                       ELSE list_filter(string_split(split_part(original_text, '&&', 1), ','), x -> x <> 'SYSTEM') END
           END AS participants,
           CASE WHEN message_type = 'INITIAL' THEN
                  CASE WHEN coalesce(split_part(original_text, '&&', 2), '') = '' THEN []::VARCHAR[]
                       ELSE string_split(split_part(original_text, '&&', 2), ',') END
           END AS cards,
           CASE WHEN message_type = 'SUBMIT' THEN
                  CASE WHEN coalesce(original_text, '') = '' THEN []::VARCHAR[] ELSE string_split(original_text, ',') END
           END AS submitted_cards,
           line
    FROM raw),
  s AS (
    SELECT *,
           (row_number() OVER g - 1)::BIGINT AS seq,
           last_value(cards IGNORE NULLS) OVER (g ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS group_cards
    FROM p
    WINDOW g AS (PARTITION BY group_id ORDER BY line))
  SELECT group_id, message_id, origin, original_text, clean_text, annotation_type, annotation_target,
         annotation_additional, team_performance, performance_change, sol_tracker_message, sol_tracker_all,
         "text", participants, cards, submitted_cards, seq,
         CASE WHEN sol_tracker_all IS NULL OR group_cards IS NULL OR cardinality(sol_tracker_all) = 0 THEN NULL
              ELSE round_even(list_avg(list_transform(map_values(sol_tracker_all), sel ->
                     CASE WHEN len(group_cards) = 0 THEN 0.0 ELSE
                       len(list_filter(group_cards, c -> list_contains(coalesce(sel, []::VARCHAR[]), c) =
                           (upper(c) IN ('A', 'E', 'I', 'O', 'U', '1', '3', '5', '7', '9'))))::DOUBLE / len(group_cards)
                     END)), 3)
         END AS team_performance_recomputed,
         message_type
  FROM s
  ORDER BY line
) TO '{{out}}/messages' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (message_type));
