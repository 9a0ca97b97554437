# Writes testdata/hostile/carried.parquet: columns in pyarrow's own types,
# which agora carries (extra_columns: carry) in types every reader takes.
import datetime as dt
import sys
import pyarrow as pa
import pyarrow.parquet as pq

t = pa.table({
    "id": pa.array(["a", "b", "c"], pa.string()),
    "big_text": pa.array(["x", None, "zé"], pa.large_string()),
    "small": pa.array([255, None, 0], pa.uint8()),
    "huge": pa.array([9007199254740993, None, 2**63 - 1], pa.uint64()),
    "category": pa.array(["red", None, "red"]).dictionary_encode(),
    "naive": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5), None, dt.datetime(1969, 12, 31, 23, 59, 59)], pa.timestamp("s")),
    "precise": pa.array([1704164645123456789, None, -1], pa.timestamp("ns", tz="Europe/London")),
    "counts": pa.array([[1, 65535], None, []], pa.large_list(pa.uint16())),
    "pair": pa.array([{"a": 4294967295, "b": "y"}, None, {"a": None, "b": None}], pa.struct([("a", pa.uint32()), ("b", pa.large_string())])),
    "nothing": pa.array([None, None, None], pa.null()),
    "clock": pa.array([5, None, 7], pa.time32("ms")),
})
pq.write_table(t, sys.argv[1], compression="snappy")
