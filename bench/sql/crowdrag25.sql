-- CrowdRAG-25: the six tables of pipeline.yaml's crowdrag25 dataset, in DuckDB SQL.
-- {{data}} is the --data root and {{out}} the output folder (filled in by bench/cmd/compare).
-- Each "-- table:" block is one COPY; the bench counts its rows.
-- Not reproduced: agora's validate rules (the generated inputs are valid, so no row is rejected),
-- its manifest, dataset card and read-back checks.

-- table: responses
COPY (
  SELECT response, topic, kind, query, references_ids, references_texts,
         coalesce(raw_text, "text") AS raw_text, cleaned_text,
         len(statements)::BIGINT AS n_statements,
         coalesce(list_sum(list_transform(statements, s -> len(s.citations))), 0)::BIGINT AS n_citations,
         len(regexp_extract_all(cleaned_text, '\S+'))::BIGINT AS n_words,
         style
  FROM read_json('{{data}}/crowdrag25/responses.jsonl.gz', format = 'newline_delimited',
    columns = {response: 'VARCHAR', topic: 'VARCHAR', style: 'VARCHAR', kind: 'VARCHAR', query: 'VARCHAR',
               references_ids: 'VARCHAR[]', references_texts: 'VARCHAR[]', raw_text: 'VARCHAR', "text": 'VARCHAR',
               cleaned_text: 'VARCHAR', statements: 'STRUCT("text" VARCHAR, citations VARCHAR[])[]'})
) TO '{{out}}/responses' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (style));

-- table: statements
COPY (
  SELECT response, topic, kind, statement_index, st."text" AS "text", st.citations AS citations,
         len(st.citations)::BIGINT AS n_citations, style
  FROM (
    SELECT response, topic, style, kind,
           unnest(range(len(statements)::BIGINT)) AS statement_index, unnest(statements) AS st
    FROM read_json('{{data}}/crowdrag25/responses.jsonl.gz', format = 'newline_delimited',
      columns = {response: 'VARCHAR', topic: 'VARCHAR', style: 'VARCHAR', kind: 'VARCHAR',
                 statements: 'STRUCT("text" VARCHAR, citations VARCHAR[])[]'}))
) TO '{{out}}/statements' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (style));

-- table: ratings
COPY (
  WITH u AS (
    SELECT submission_id, query_id, response_a, response_b, worker AS workers,
           unnest([
      {dimension: 'correctness_topical', votes: correctness_topical_vote, spam_probabilities: correctness_topical_spam_probability, p_a: correctness_topical_p_a, p_n: correctness_topical_p_n, p_b: correctness_topical_p_b, gold: correctness_topical_gold},
      {dimension: 'coherence_logical', votes: coherence_logical_vote, spam_probabilities: coherence_logical_spam_probability, p_a: coherence_logical_p_a, p_n: coherence_logical_p_n, p_b: coherence_logical_p_b, gold: coherence_logical_gold},
      {dimension: 'coherence_stylistic', votes: coherence_stylistic_vote, spam_probabilities: coherence_stylistic_spam_probability, p_a: coherence_stylistic_p_a, p_n: coherence_stylistic_p_n, p_b: coherence_stylistic_p_b, gold: coherence_stylistic_gold},
      {dimension: 'coverage_broad', votes: coverage_broad_vote, spam_probabilities: coverage_broad_spam_probability, p_a: coverage_broad_p_a, p_n: coverage_broad_p_n, p_b: coverage_broad_p_b, gold: coverage_broad_gold},
      {dimension: 'coverage_deep', votes: coverage_deep_vote, spam_probabilities: coverage_deep_spam_probability, p_a: coverage_deep_p_a, p_n: coverage_deep_p_n, p_b: coverage_deep_p_b, gold: coverage_deep_gold},
      {dimension: 'consistency_internal', votes: consistency_internal_vote, spam_probabilities: consistency_internal_spam_probability, p_a: consistency_internal_p_a, p_n: consistency_internal_p_n, p_b: consistency_internal_p_b, gold: consistency_internal_gold},
      {dimension: 'quality_overall', votes: quality_overall_vote, spam_probabilities: quality_overall_spam_probability, p_a: quality_overall_p_a, p_n: quality_overall_p_n, p_b: quality_overall_p_b, gold: quality_overall_gold}
           ], recursive := true)
    FROM read_json('{{data}}/crowdrag25/ratings.jsonl.gz', format = 'newline_delimited',
      columns = {submission_id:'VARCHAR', query_id:'VARCHAR', response_a:'VARCHAR', response_b:'VARCHAR', worker:'VARCHAR[]', correctness_topical_vote:'VARCHAR[]', correctness_topical_spam_probability:'DOUBLE[]', correctness_topical_p_a:'DOUBLE', correctness_topical_p_n:'DOUBLE', correctness_topical_p_b:'DOUBLE', correctness_topical_gold:'VARCHAR', coherence_logical_vote:'VARCHAR[]', coherence_logical_spam_probability:'DOUBLE[]', coherence_logical_p_a:'DOUBLE', coherence_logical_p_n:'DOUBLE', coherence_logical_p_b:'DOUBLE', coherence_logical_gold:'VARCHAR', coherence_stylistic_vote:'VARCHAR[]', coherence_stylistic_spam_probability:'DOUBLE[]', coherence_stylistic_p_a:'DOUBLE', coherence_stylistic_p_n:'DOUBLE', coherence_stylistic_p_b:'DOUBLE', coherence_stylistic_gold:'VARCHAR', coverage_broad_vote:'VARCHAR[]', coverage_broad_spam_probability:'DOUBLE[]', coverage_broad_p_a:'DOUBLE', coverage_broad_p_n:'DOUBLE', coverage_broad_p_b:'DOUBLE', coverage_broad_gold:'VARCHAR', coverage_deep_vote:'VARCHAR[]', coverage_deep_spam_probability:'DOUBLE[]', coverage_deep_p_a:'DOUBLE', coverage_deep_p_n:'DOUBLE', coverage_deep_p_b:'DOUBLE', coverage_deep_gold:'VARCHAR', consistency_internal_vote:'VARCHAR[]', consistency_internal_spam_probability:'DOUBLE[]', consistency_internal_p_a:'DOUBLE', consistency_internal_p_n:'DOUBLE', consistency_internal_p_b:'DOUBLE', consistency_internal_gold:'VARCHAR', quality_overall_vote:'VARCHAR[]', quality_overall_spam_probability:'DOUBLE[]', quality_overall_p_a:'DOUBLE', quality_overall_p_n:'DOUBLE', quality_overall_p_b:'DOUBLE', quality_overall_gold:'VARCHAR'})),
  l AS (
    SELECT * REPLACE (list_transform(votes, v -> lower(v)) AS votes, lower(gold) AS gold) FROM u)
  SELECT submission_id, query_id, response_a, response_b, workers, votes, spam_probabilities,
         p_a, p_n, p_b, gold,
         len(list_filter(votes, v -> v = 'a'))::BIGINT AS n_votes_a,
         len(list_filter(votes, v -> v = 'b'))::BIGINT AS n_votes_b,
         len(list_filter(votes, v -> v = 'n'))::BIGINT AS n_votes_n,
         greatest(len(list_filter(votes, v -> v = 'a')), len(list_filter(votes, v -> v = 'b')),
                  len(list_filter(votes, v -> v = 'n'))) >= 3 AS has_majority,
         least(response_a, response_b) || '|' || greatest(response_a, response_b) AS pair_key,
         dimension
  FROM l
) TO '{{out}}/ratings' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (dimension));

-- table: votes
COPY (
  WITH u AS (
    SELECT submission_id, query_id, response_a, response_b, worker,
           unnest([
      {dimension: 'correctness_topical', vote: correctness_topical_vote, spam_probability: correctness_topical_spam_probability, gold: correctness_topical_gold},
      {dimension: 'coherence_logical', vote: coherence_logical_vote, spam_probability: coherence_logical_spam_probability, gold: coherence_logical_gold},
      {dimension: 'coherence_stylistic', vote: coherence_stylistic_vote, spam_probability: coherence_stylistic_spam_probability, gold: coherence_stylistic_gold},
      {dimension: 'coverage_broad', vote: coverage_broad_vote, spam_probability: coverage_broad_spam_probability, gold: coverage_broad_gold},
      {dimension: 'coverage_deep', vote: coverage_deep_vote, spam_probability: coverage_deep_spam_probability, gold: coverage_deep_gold},
      {dimension: 'consistency_internal', vote: consistency_internal_vote, spam_probability: consistency_internal_spam_probability, gold: consistency_internal_gold},
      {dimension: 'quality_overall', vote: quality_overall_vote, spam_probability: quality_overall_spam_probability, gold: quality_overall_gold}
           ], recursive := true)
    FROM read_json('{{data}}/crowdrag25/ratings.jsonl.gz', format = 'newline_delimited',
      columns = {submission_id:'VARCHAR', query_id:'VARCHAR', response_a:'VARCHAR', response_b:'VARCHAR', worker:'VARCHAR[]', correctness_topical_vote:'VARCHAR[]', correctness_topical_spam_probability:'DOUBLE[]', correctness_topical_p_a:'DOUBLE', correctness_topical_p_n:'DOUBLE', correctness_topical_p_b:'DOUBLE', correctness_topical_gold:'VARCHAR', coherence_logical_vote:'VARCHAR[]', coherence_logical_spam_probability:'DOUBLE[]', coherence_logical_p_a:'DOUBLE', coherence_logical_p_n:'DOUBLE', coherence_logical_p_b:'DOUBLE', coherence_logical_gold:'VARCHAR', coherence_stylistic_vote:'VARCHAR[]', coherence_stylistic_spam_probability:'DOUBLE[]', coherence_stylistic_p_a:'DOUBLE', coherence_stylistic_p_n:'DOUBLE', coherence_stylistic_p_b:'DOUBLE', coherence_stylistic_gold:'VARCHAR', coverage_broad_vote:'VARCHAR[]', coverage_broad_spam_probability:'DOUBLE[]', coverage_broad_p_a:'DOUBLE', coverage_broad_p_n:'DOUBLE', coverage_broad_p_b:'DOUBLE', coverage_broad_gold:'VARCHAR', coverage_deep_vote:'VARCHAR[]', coverage_deep_spam_probability:'DOUBLE[]', coverage_deep_p_a:'DOUBLE', coverage_deep_p_n:'DOUBLE', coverage_deep_p_b:'DOUBLE', coverage_deep_gold:'VARCHAR', consistency_internal_vote:'VARCHAR[]', consistency_internal_spam_probability:'DOUBLE[]', consistency_internal_p_a:'DOUBLE', consistency_internal_p_n:'DOUBLE', consistency_internal_p_b:'DOUBLE', consistency_internal_gold:'VARCHAR', quality_overall_vote:'VARCHAR[]', quality_overall_spam_probability:'DOUBLE[]', quality_overall_p_a:'DOUBLE', quality_overall_p_n:'DOUBLE', quality_overall_p_b:'DOUBLE', quality_overall_gold:'VARCHAR'})),
  e AS (
    SELECT submission_id, query_id, response_a, response_b, gold, dimension,
           unnest(range(len(worker)::BIGINT)) AS worker_index,
           unnest(worker) AS worker, unnest(vote) AS vote, unnest(spam_probability) AS spam_probability
    FROM u)
  SELECT submission_id, query_id, response_a, response_b, lower(gold) AS gold, worker_index, worker,
         lower(vote) AS vote, spam_probability,
         least(response_a, response_b) || '|' || greatest(response_a, response_b) AS pair_key,
         dimension
  FROM e
) TO '{{out}}/votes' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (dimension));

-- table: llm_ratings
COPY (
  WITH u AS (
    SELECT query_id, response_a, response_b, inference, line,
           unnest([
      {dimension: 'correctness_topical', label: correctness_topical},
      {dimension: 'coherence_logical', label: coherence_logical},
      {dimension: 'coherence_stylistic', label: coherence_stylistic},
      {dimension: 'coverage_broad', label: coverage_broad},
      {dimension: 'coverage_deep', label: coverage_deep},
      {dimension: 'consistency_internal', label: consistency_internal},
      {dimension: 'quality_overall', label: quality_overall}
           ], recursive := true)
    FROM (SELECT *, row_number() OVER () AS line
          FROM read_json('{{data}}/crowdrag25/llm_ratings.jsonl.gz', format = 'newline_delimited',
            columns = {query_id: 'VARCHAR', response_a: 'VARCHAR', response_b: 'VARCHAR', inference: 'VARCHAR', correctness_topical: 'VARCHAR', coherence_logical: 'VARCHAR', coherence_stylistic: 'VARCHAR', coverage_broad: 'VARCHAR', coverage_deep: 'VARCHAR', consistency_internal: 'VARCHAR', quality_overall: 'VARCHAR'}))),
  w AS (
    SELECT query_id, response_a, response_b, inference, lower(label) AS label, dimension, line FROM u)
  SELECT query_id, response_a, response_b, inference, label,
         least(response_a, response_b) || '|' || greatest(response_a, response_b) AS pair_key,
         (row_number() OVER k - 1)::BIGINT AS occurrence,
         count(DISTINCT coalesce(label, chr(0))) OVER (PARTITION BY response_a, response_b, inference, dimension) > 1
           AS conflicting_duplicate,
         dimension
  FROM w
  WINDOW k AS (PARTITION BY response_a, response_b, inference, dimension ORDER BY line)
  ORDER BY line, dimension
) TO '{{out}}/llm_ratings' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (dimension));

-- table: grades
COPY (
  SELECT response, grade, dimension
  FROM (
    SELECT response,
           unnest([
      {dimension: 'correctness_topical', grade: correctness_topical},
      {dimension: 'coherence_logical', grade: coherence_logical},
      {dimension: 'coherence_stylistic', grade: coherence_stylistic},
      {dimension: 'coverage_broad', grade: coverage_broad},
      {dimension: 'coverage_deep', grade: coverage_deep},
      {dimension: 'consistency_internal', grade: consistency_internal},
      {dimension: 'quality_overall', grade: quality_overall}
           ], recursive := true)
    FROM read_json('{{data}}/crowdrag25/grades.jsonl.gz', format = 'newline_delimited',
      columns = {response: 'VARCHAR', correctness_topical: 'BIGINT', coherence_logical: 'BIGINT', coherence_stylistic: 'BIGINT', coverage_broad: 'BIGINT', coverage_deep: 'BIGINT', consistency_internal: 'BIGINT', quality_overall: 'BIGINT'}))
) TO '{{out}}/grades' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 65536, OVERWRITE_OR_IGNORE, PARTITION_BY (dimension));
