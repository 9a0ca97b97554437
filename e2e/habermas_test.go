package e2e

import (
	"path/filepath"
	"testing"
)

func TestHabermasReadByDuckDB(t *testing.T) {
	out := t.TempDir()
	runAgora(t, "../testdata", out, "--only", "habermas")
	ds := filepath.Join(out, "habermas")
	db := openDuck(t)
	tbl := func(name string) string {
		return "read_parquet('" + ds + "/" + name + "/**/*.parquet', hive_partitioning=true)"
	}
	src := "read_parquet('../testdata/habermas/hm_all_candidate_comparisons.parquet')"
	pos := "read_parquet('../testdata/habermas/hm_all_position_statement_ratings.parquet')"

	counts := map[string]string{
		"comparisons":       "SELECT count(*) FROM " + src,
		"candidate_ratings": `SELECT sum(len("candidates.metadata.id")) FROM ` + src,
		"other_opinions":    `SELECT sum(len("other_opinions.text")) FROM ` + src,
		"round_outcomes":    "SELECT count(*) FROM (SELECT DISTINCT round_id, iteration_index FROM " + src + ")",
		"position_ratings":  `SELECT sum(len("ratings.agreement")) FROM ` + pos,
	}
	for name, q := range counts {
		want := queryInt(t, db, q)
		if got := queryInt(t, db, "SELECT count(*) FROM "+tbl(name)); got != want || want == 0 {
			t.Errorf("%s: %d rows, want %d", name, got, want)
		}
	}

	types := map[string]string{}
	rows, err := db.Query("DESCRIBE SELECT * FROM " + tbl("comparisons"))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, typ string
		var a, b, c, d any
		rows.Scan(&name, &typ, &a, &b, &c, &d)
		types[name] = typ
	}
	rows.Close()
	for c, w := range map[string]string{
		"candidates_metadata_id":                    "VARCHAR[]",
		"metadata_created":                          "TIMESTAMP WITH TIME ZONE",
		"metadata_updated":                          "TIMESTAMP WITH TIME ZONE",
		"question_topic":                            "BIGINT",
		"candidates_reward_data_reward_predictions": "DOUBLE[][]",
		"rankings_numerical_ranks":                  "BIGINT[]",
		"metadata_version":                          "VARCHAR",
	} {
		if types[c] != w {
			t.Errorf("comparisons.%s is %q, want %q", c, types[c], w)
		}
	}
	q := `SELECT count(*) FROM (SELECT "metadata.id", "candidates.metadata.id", "rankings.numerical_ranks", "metadata.created" FROM ` + src + `
		EXCEPT SELECT metadata_id, candidates_metadata_id, rankings_numerical_ranks, metadata_created FROM ` + tbl("comparisons") + `)`
	if n := queryInt(t, db, q); n != 0 {
		t.Errorf("%d comparisons differ from the source", n)
	}
	// Ranks are matched to candidates by id, not by position.
	q = `SELECT count(*) FROM ` + tbl("candidate_ratings") + ` r JOIN ` + src + ` s ON s."metadata.id" = r.metadata_id
		WHERE r.rank IS DISTINCT FROM s."rankings.numerical_ranks"[list_position(s."rankings.candidate_ids", r.candidate_id)]
		   OR r.candidate_text <> s."candidates.text"[r.candidate_index + 1]
		   OR r.agreement <> s."ratings.agreement"[r.candidate_index + 1]`
	if n := queryInt(t, db, q); n != 0 {
		t.Errorf("%d candidate ratings disagree with the source", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM `+src+` WHERE "rankings.candidate_ids" <> "candidates.metadata.id"`); n == 0 {
		t.Error("the sample never orders rankings differently from candidates: the id matching is untested")
	}
	checks := map[string]string{
		"agreement_value is the Likert position": `agreement_value IS DISTINCT FROM nullif(list_position(['STRONGLY_DISAGREE','DISAGREE','SOMEWHAT_DISAGREE','NEUTRAL','SOMEWHAT_AGREE','AGREE','STRONGLY_AGREE'], agreement), 0)`,
		"quality_value is the Likert position":   `quality_value IS DISTINCT FROM nullif(list_position(['TERRIBLE_QUALITY','POOR_QUALITY','SOMEWHAT_POOR_QUALITY','NEUTRAL','SOMEWHAT_GOOD_QUALITY','GOOD_QUALITY','EXCELLENT_QUALITY'], quality), 0)`,
		"is_mock is MOCK or -1":                  `is_mock <> (agreement = 'MOCK' OR quality = 'MOCK' OR coalesce(rank, 0) = -1)`,
	}
	for name, where := range checks {
		if n := queryInt(t, db, "SELECT count(*) FROM "+tbl("candidate_ratings")+" WHERE "+where); n != 0 {
			t.Errorf("%s: %d rows violate it", name, n)
		}
	}
	if n := queryInt(t, db, "SELECT count(*) FROM "+tbl("candidate_ratings")+" WHERE is_mock"); n == 0 {
		t.Error("no mock ratings in the sample")
	}
	// The generator's iteration-1 top candidate is the iteration-0 Schulze
	// winner: agora's Schulze must agree everywhere it has a winner.
	q = `SELECT count(*) FROM ` + tbl("round_outcomes") + ` WHERE iteration_index = 0 AND next_top_candidate_id IS NOT NULL AND schulze_winner IS NOT NULL AND NOT winner_is_next_top`
	if n := queryInt(t, db, q); n != 0 {
		t.Errorf("%d rounds where agora's Schulze winner is not the next top candidate", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM `+tbl("round_outcomes")+` WHERE winner_is_next_top`); n == 0 {
		t.Error("winner_is_next_top never true")
	}
	q = `SELECT count(*) FROM ` + tbl("other_opinions") + ` o JOIN ` + src + ` s ON s."metadata.id" = o.metadata_id WHERE o.text <> s."other_opinions.text"[o.opinion_index + 1]`
	if n := queryInt(t, db, q); n != 0 {
		t.Errorf("%d other opinions differ", n)
	}
}
