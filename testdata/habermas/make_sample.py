"""Regenerate the shipped Habermas Machine sample (make habermas-sample).

Runs the Go generator for the 300-row sample into a temporary directory,
then reads each file with pandas and writes it back the way the real
release was written: DataFrame.to_parquet with pyarrow, no index, snappy,
row groups of 100, "element" list items, pandas metadata, ns timestamps.
Two pandas quirks are applied on the way: metadata.created is made
datetime64[ns, UTC] explicitly, and question.topic becomes a float column
with NaN in two rows (what pandas does to an int column with missing
values).

Run from anywhere with the project venv:

    .venv/bin/python testdata/habermas/make_sample.py
"""

import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "testdata" / "habermas"
ROWS = 300
ROW_GROUP = 100
FILES = (
    "hm_all_candidate_comparisons.parquet",
    "hm_all_position_statement_ratings.parquet",
)
# Rows whose question.topic is set to NaN (fixed, so reruns are identical).
NAN_TOPIC_ROWS = (17, 211)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="habermas-sample-") as tmp:
        subprocess.run(
            ["go", "run", "./cmd/agora-gen", "habermas", "--rows", str(ROWS), "--out", tmp],
            cwd=ROOT,
            check=True,
        )
        for name in FILES:
            df = pd.read_parquet(pathlib.Path(tmp) / name, engine="pyarrow")
            df["metadata.created"] = pd.to_datetime(df["metadata.created"], utc=True).astype(
                "datetime64[ns, UTC]"
            )
            topic = df["question.topic"].astype("float64")
            topic.iloc[list(NAN_TOPIC_ROWS)] = np.nan
            df["question.topic"] = topic
            dest = OUT / name
            df.to_parquet(
                dest, engine="pyarrow", index=False, compression="snappy", row_group_size=ROW_GROUP
            )
            print(f"{dest.relative_to(ROOT)}: {len(df)} rows, {dest.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
