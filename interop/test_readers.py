"""Every published table, read by the consumers agora exists for.

Runs agora on the shipped samples (and on the hostile-partition fixture),
then reads every table of every dataset with Spark (local mode, partition
discovery, and mergeSchema), pyarrow.dataset (Hive partitioning),
pandas.read_parquet and polars.scan_parquet(hive_partitioning=True), and
checks, against manifest.json and DuckDB:

- row counts,
- column types (lists, maps, timestamps as UTC instants, partition columns),
- every value: each reader's rows, normalised, equal DuckDB's.

No reader gets a compatibility flag. Run with `make interop`.
"""

import datetime as dt
import json
import math
import os
import re
import subprocess
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
AGORA = Path(os.environ.get("AGORA_BIN", ROOT / "bin" / "agora"))


# ---------------------------------------------------------------- running agora


def run_agora(out: Path, config: str) -> None:
    subprocess.run(
        [str(AGORA), "run", "--config", str(ROOT / config), "--data", str(ROOT / "testdata"), "--out", str(out)],
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="session")
def out(tmp_path_factory) -> Path:
    o = tmp_path_factory.mktemp("out")
    run_agora(o, "pipeline.yaml")
    run_agora(o, "testdata/hostile/pipeline.yaml")
    return o


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    s = (
        SparkSession.builder.master("local[2]")
        .appName("agora-interop")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def tables():
    """(dataset, table) of every table the shipped configs declare."""
    found = []
    for cfg in ["pipeline.yaml", "testdata/hostile/pipeline.yaml"]:
        doc = yaml.safe_load((ROOT / cfg).read_text())
        for ds, d in doc["datasets"].items():
            found += [(ds, name) for name in d["tables"]]
    return found


TABLES = tables()


def manifest(out: Path, ds: str) -> dict:
    return json.loads((out / ds / "manifest.json").read_text())


def table_meta(out: Path, ds: str, name: str) -> dict:
    return next(t for t in manifest(out, ds)["tables"] if t["name"] == name)


# ---------------------------------------------------------------- types


def parse_type(s: str):
    """Parse agora's type grammar (as in the manifest) into a tree."""
    s = s.replace(" ", "")
    pos = 0

    def ident():
        nonlocal pos
        start = pos
        while pos < len(s) and s[pos] not in "<>,:":
            pos += 1
        return s[start:pos]

    def parse():
        nonlocal pos
        name = ident()
        if name in ("list", "map", "struct"):
            pos += 1  # <
            if name == "list":
                e = parse()
                pos += 1
                return ("list", e)
            if name == "map":
                k = parse()
                pos += 1
                v = parse()
                pos += 1
                return ("map", k, v)
            fields = []
            while True:
                fname = ident()
                pos += 1  # :
                fields.append((fname, parse()))
                if s[pos] == ",":
                    pos += 1
                    continue
                pos += 1
                return ("struct", tuple(fields))
        return name

    return parse()


def spark_type_ok(want, got) -> bool:
    from pyspark.sql import types as T

    if isinstance(want, str):
        return isinstance(
            got,
            {
                "string": T.StringType,
                "int64": T.LongType,
                "int32": T.IntegerType,
                "float64": T.DoubleType,
                "bool": T.BooleanType,
                "timestamp": T.TimestampType,  # an instant (LTZ), not TIMESTAMP_NTZ
                "date": T.DateType,
            }[want],
        )
    if want[0] == "list":
        return isinstance(got, T.ArrayType) and spark_type_ok(want[1], got.elementType)
    if want[0] == "map":
        return isinstance(got, T.MapType) and spark_type_ok(want[1], got.keyType) and spark_type_ok(want[2], got.valueType)
    return isinstance(got, T.StructType) and [f.name for f in got.fields] == [n for n, _ in want[1]] and all(
        spark_type_ok(w, f.dataType) for (_, w), f in zip(want[1], got.fields)
    )


def arrow_type_ok(want, got: pa.DataType) -> bool:
    if isinstance(want, str):
        if want == "timestamp":
            return pa.types.is_timestamp(got) and got.unit == "us" and got.tz in ("UTC", "+00:00")
        return {
            "string": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t),
            "int64": pa.types.is_int64,
            "int32": pa.types.is_int32,
            "float64": pa.types.is_float64,
            "bool": pa.types.is_boolean,
            "date": pa.types.is_date32,
        }[want](got)
    if want[0] == "list":
        return (pa.types.is_list(got) or pa.types.is_large_list(got)) and arrow_type_ok(want[1], got.value_type)
    if want[0] == "map":
        return pa.types.is_map(got) and arrow_type_ok(want[1], got.key_type) and arrow_type_ok(want[2], got.item_type)
    return pa.types.is_struct(got) and [got.field(i).name for i in range(got.num_fields)] == [n for n, _ in want[1]] and all(
        arrow_type_ok(w, got.field(i).type) for i, (_, w) in enumerate(want[1])
    )


def polars_type_ok(want, got) -> bool:
    if isinstance(want, str):
        if want == "timestamp":
            return isinstance(got, pl.Datetime) and got.time_unit == "us" and got.time_zone == "UTC"
        return got == {"string": pl.String, "int64": pl.Int64, "int32": pl.Int32, "float64": pl.Float64, "bool": pl.Boolean, "date": pl.Date}[want]
    if want[0] == "list":
        return isinstance(got, pl.List) and polars_type_ok(want[1], got.inner)
    if want[0] == "map":
        if hasattr(pl, "Map") and isinstance(got, pl.Map):  # polars ≥ 2
            return polars_type_ok(want[1], got.key) and polars_type_ok(want[2], got.value)
        # older polars: a list of {key, value}
        return isinstance(got, pl.List) and isinstance(got.inner, pl.Struct) and [f.name for f in got.inner.fields] == ["key", "value"]
    return isinstance(got, pl.Struct) and [f.name for f in got.fields] == [n for n, _ in want[1]] and all(
        polars_type_ok(w, f.dtype) for (_, w), f in zip(want[1], got.fields)
    )


# ---------------------------------------------------------------- values


def norm(v, t):
    """One canonical Python value per reader's representation."""
    if v is None or v is pd.NaT:  # pandas spells a null timestamp NaT
        return None
    if isinstance(v, float) and math.isnan(v):
        return None  # pandas spells null floats NaN; JSON inputs cannot hold a real NaN
    if isinstance(t, tuple) and t[0] == "map":
        items = v.items() if isinstance(v, dict) else ((x["key"], x["value"]) if isinstance(x, dict) else tuple(x) for x in v)
        return tuple(sorted((norm(k, t[1]), norm(x, t[2])) for k, x in items))
    if isinstance(t, tuple) and t[0] == "list":
        return tuple(norm(x, t[1]) for x in v)
    if isinstance(t, tuple) and t[0] == "struct":
        if isinstance(v, dict):
            return tuple(norm(v.get(n), ft) for n, ft in t[1])
        return tuple(norm(getattr(v, n), ft) for n, ft in t[1])
    if t == "timestamp":
        if isinstance(v, pd.Timestamp):
            v = v.to_pydatetime()
        if v.tzinfo is None:  # Spark hands out session-time-zone (UTC) values
            v = v.replace(tzinfo=dt.timezone.utc)
        return v.astimezone(dt.timezone.utc).isoformat()
    if t == "int64" or t == "int32":
        return int(v)
    if t == "float64":
        return float(v)
    if t == "bool":
        return bool(v)
    if hasattr(v, "tolist"):  # numpy scalars and arrays from pandas
        return norm(v.tolist(), t)
    return v


def canonical(rows, cols, types):
    out = [tuple(norm(r[c], types[c]) for c in cols) for r in rows]
    return sorted(out, key=repr)


def columns_and_types(meta):
    cols = [c["name"] for c in meta["schema"]]
    types = {c["name"]: parse_type(c["type"]) for c in meta["schema"]}
    return cols, types


def duck_rows(path: Path, cols):
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    rel = con.sql(f"SELECT * FROM read_parquet('{path}/**/*.parquet', hive_partitioning=true)")
    names = rel.columns
    return [dict(zip(names, r)) for r in rel.fetchall()]


# ---------------------------------------------------------------- the checks


def test_every_declared_table_is_published(out):
    published = {(ds, t["name"]) for ds in {d for d, _ in TABLES} for t in manifest(out, ds)["tables"]}
    assert published == set(TABLES)


@pytest.mark.parametrize("ds,name", TABLES, ids=[f"{d}/{t}" for d, t in TABLES])
def test_readers_agree(out, spark, ds, name):
    meta = table_meta(out, ds, name)
    path = out / ds / name
    cols, types = columns_and_types(meta)
    rows = meta["rows_written"]
    assert rows == sum(f["rows"] for f in meta["files"] if not f["path"].startswith("_rejects/"))

    ref = canonical(duck_rows(path, cols), cols, types)
    assert len(ref) == rows, "duckdb"

    # Spark: partition discovery on the table folder, then mergeSchema.
    for reader in (spark.read, spark.read.option("mergeSchema", "true")):
        df = reader.parquet(str(path))
        assert df.count() == rows
        fields = {f.name: f.dataType for f in df.schema.fields}
        assert sorted(fields) == sorted(cols)
        for c in cols:
            assert spark_type_ok(types[c], fields[c]), f"spark {c}: {fields[c]}"
        got = canonical([r.asDict(recursive=False) for r in df.collect()], cols, types)
        assert got == ref, "spark values differ from duckdb"

    # pyarrow and polars unescape a partition segment before comparing it
    # with the Hive null sentinel, so a literal "__HIVE_DEFAULT_PARTITION__"
    # value reads as null there (only the hostile fixture has one).
    parts = {i for i, c in enumerate(cols) if c in (meta.get("partition_by") or [])}
    ref_unescaped = sorted(
        (tuple(None if i in parts and v == "__HIVE_DEFAULT_PARTITION__" else v for i, v in enumerate(r)) for r in ref), key=repr
    )

    # pyarrow dataset with Hive partitioning.
    tbl = pads.dataset(str(path), partitioning="hive", format="parquet").to_table()
    assert tbl.num_rows == rows
    for c in cols:
        assert arrow_type_ok(types[c], tbl.schema.field(c).type), f"pyarrow {c}: {tbl.schema.field(c).type}"
    assert canonical(tbl.to_pylist(), cols, types) == ref_unescaped, "pyarrow values differ from duckdb"

    # polars, lazily, with Hive partitioning.
    pdf = pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=True).collect()
    assert pdf.height == rows
    for c in cols:
        assert polars_type_ok(types[c], pdf.schema[c]), f"polars {c}: {pdf.schema[c]}"
    assert canonical(pdf.to_dicts(), cols, types) == ref_unescaped, "polars values differ from duckdb"

    # pandas (through pyarrow). A null partition value makes pyarrow's
    # dictionary-typed partition column unconvertible ("Cannot yet unify
    # dictionaries with nulls"): a known pyarrow limitation, documented in
    # the README, and only the hostile fixture has one.
    has_null_partition = any(
        v in (None, "__HIVE_DEFAULT_PARTITION__") for f in meta["files"] for v in (f.get("partition") or {}).values()
    )
    if not has_null_partition:
        frame = pd.read_parquet(path)
        assert len(frame) == rows
        # pandas holds an integer column with nulls as float64 (numpy ints
        # have no null), exact only up to 2**53, as the README says: such
        # columns are compared as pandas can hold them, the others exactly.
        lossy = [i for i, c in enumerate(cols) if types[c] in ("int64", "int32") and frame[c].dtype.kind == "f"]
        want = sorted(
            (tuple(int(float(v)) if i in lossy and v is not None else v for i, v in enumerate(r)) for r in ref), key=repr
        )
        assert canonical(frame.to_dict("records"), cols, types) == want, "pandas values differ from duckdb"


def expected_partition_values():
    want = {}
    for line in (ROOT / "testdata/hostile/values.jsonl").read_text().splitlines():
        r = json.loads(line)
        want[r["id"]] = r["key"] or None  # an empty value reads as null, as in Spark
    return want


def test_escaped_partition_values_round_trip(out, spark):
    """/, =, %, spaces, non-ASCII, NULL, empty and null: every reader gives back the same value."""
    path = out / "hostile" / "values"
    want = expected_partition_values()
    # The literal Hive null sentinel is the one value pyarrow and polars
    # read as null (they unescape before comparing); Spark and DuckDB keep it.
    sentinel = {i for i, v in want.items() if v == "__HIVE_DEFAULT_PARTITION__"}

    got = {r.id: r.part for r in spark.read.parquet(str(path)).select("id", "part").collect()}
    assert got == want, "spark"
    con = duckdb.connect()
    got = dict(con.sql(f"SELECT id, part FROM read_parquet('{path}/**/*.parquet', hive_partitioning=true)").fetchall())
    assert got == want, "duckdb"
    tbl = pads.dataset(str(path), partitioning="hive").to_table(columns=["id", "part"])
    got = dict(zip(tbl["id"].to_pylist(), tbl["part"].to_pylist()))
    assert {k: v for k, v in got.items() if k not in sentinel} == {k: v for k, v in want.items() if k not in sentinel}, "pyarrow"
    pdf = pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=True).select("id", "part").collect()
    got = dict(zip(pdf["id"].to_list(), pdf["part"].to_list()))
    assert {k: v for k, v in got.items() if k not in sentinel} == {k: v for k, v in want.items() if k not in sentinel}, "polars"


def test_timestamps_are_utc_instants(out, spark):
    path = out / "hostile" / "values"
    first = dt.datetime(2024, 1, 1, 3, 4, 5, 123456, tzinfo=dt.timezone.utc)
    tbl = pads.dataset(str(path), partitioning="hive").to_table(columns=["id", "ts"])
    for i, ts in zip(tbl["id"].to_pylist(), tbl["ts"].to_pylist()):
        assert ts == first + dt.timedelta(days=i % 9, microseconds=i)
    row = spark.read.parquet(str(path)).where("id = 0").select("ts").first()
    assert row.ts.replace(tzinfo=dt.timezone.utc) == first  # session time zone is UTC


# ---------------------------------------------------------------- README snippets


def readme_snippets(lang):
    """Code blocks of the README marked <!-- run: LANG -->."""
    text = (ROOT / "README.md").read_text()
    return re.findall(r"<!-- run: " + lang + r" -->\s*```\w*\n(.*?)```", text, re.S)


def test_readme_python_snippets_run(out, spark):
    snippets = readme_snippets("python")
    assert snippets, "the README has no runnable Python snippets"
    for code in snippets:
        # The snippets read ./out as after `make run`; point them at this
        # run's output (Spark's JVM keeps its own working directory).
        code = code.replace('"out/', f'"{out}/')
        ns = {"spark": spark}
        exec(compile(code, "README.md", "exec"), ns)
