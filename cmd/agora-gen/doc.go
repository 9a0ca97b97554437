/*
agora-gen generates deterministic, synthetic but format-faithful copies of
the datasets agora ingests, for tests, benchmarks and demos.

Usage:

	go run ./cmd/agora-gen crowdrag25 --out DIR [--scale F] [--topics N --rated-topics M] [--seed S]

# crowdrag25

Writes the four files of the CrowdRAG-25 release into DIR, byte-compatible
with what pandas' to_json(orient="records", lines=True, compression="gzip")
produces: gzip members named after the uncompressed file, compact ASCII-only
JSON Lines with ujson's escaping ("\/", lowercase \uXXXX, surrogate pairs)
and double_precision=10 floats.

  - responses.jsonl.gz: 6 responses per topic (bullet/essay/news ×
    human/llm) with query, 20 MS MARCO v2.1 references, raw_text with
    citation markers, cleaned_text and cited statements.
  - ratings.jsonl.gz: crowd pairwise judgments per ordered response pair
    of the rated topics: 5 workers, votes, MACE spam probabilities,
    posteriors and gold label per dimension (no quality_overall_p_n).
  - llm_ratings.jsonl.gz: gpt-4o judgments ("combined" rows, then
    "individual"), including duplicated and conflicting keys and one
    combined row that is null in six dimensions.
  - grades.jsonl.gz: per rated response, a 1..6 rank per dimension
    (1 = best), shuffled.

--scale 1 is the size of the real release (301 topics, 65 of them rated
pairwise); --topics and --rated-topics override it. Output is a pure
function of the flags and --seed (default 25): it is streamed topic by
topic, never depends on map order or the clock, and uses only PCG's raw
stream from math/rand/v2 plus integer and basic IEEE arithmetic.

# Shipped sample

The committed files in testdata/crowdrag25 are reproduced byte for byte by
running, from the module root:

	go run ./cmd/agora-gen crowdrag25 --out testdata/crowdrag25 --topics 6 --rated-topics 4

TestSampleMatchesTestdata fails when the generator and the committed sample
drift apart; rerun the command above (and review the diff) when that is
intended.
*/
package main
