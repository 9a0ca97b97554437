#!/usr/bin/env node
// read-all.mjs DIR
//
// Independent (non-Go, non-DuckDB) Parquet reader for agora's end-to-end
// tests. Walks DIR recursively (folders starting with "_" such as _rejects are
// included, anything whose name starts with "." is skipped) and fully decodes
// every *.parquet file with hyparquet + hyparquet-compressors.
//
// For each file one JSON line is printed to stdout:
//   {"path", "rows", "metadata_rows", "columns", "first", "checksum"}
//
// Exit codes:
//   0  every file decoded and rows decoded == footer num_rows
//   1  at least one file failed (details on stderr, one line per failure)
//   2  usage error, DIR unreadable, or no parquet files found

import { promises as fs } from 'node:fs'
import path from 'node:path'
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

/** Recursively collect *.parquet files under dir, sorted for stable output. */
async function walk(dir, out) {
  const entries = await fs.readdir(dir, { withFileTypes: true })
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue
    const full = path.join(dir, entry.name)
    let isDir = entry.isDirectory()
    let isFile = entry.isFile()
    if (entry.isSymbolicLink()) {
      const st = await fs.stat(full).catch(() => null)
      isDir = !!st?.isDirectory()
      isFile = !!st?.isFile()
    }
    if (isDir) await walk(full, out)
    else if (isFile && entry.name.endsWith('.parquet')) out.push(full)
  }
  return out
}

/** BigInt -> Number when safe, else decimal string. */
function bigToJson(v) {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()
}

/** Convert a decoded value into plain JSON-safe data. */
function toPlain(v) {
  if (v === undefined || v === null) return null
  if (typeof v === 'bigint') return bigToJson(v)
  if (typeof v === 'number') {
    if (Number.isNaN(v) || !Number.isFinite(v)) return String(v) // NaN / Infinity are not JSON
    return Object.is(v, -0) ? 0 : v
  }
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString()
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64')
  if (ArrayBuffer.isView(v)) return Array.from(v, toPlain)
  if (Array.isArray(v)) return v.map(toPlain)
  if (typeof v === 'object') {
    const o = {}
    for (const k of Object.keys(v)) o[k] = toPlain(v[k])
    return o
  }
  return v
}

function newChecksum() {
  return {
    values: 0, // non-null leaf values
    nulls: 0, // null/undefined at any depth (cells, list elements, struct fields, map values)
    strings: 0, // string leaf values
    string_bytes: 0, // total UTF-8 bytes of string leaf values
    bytes: 0, // total bytes of binary (non-UTF8) leaf values
    true: 0, // boolean true count
    false: 0, // boolean false count
    dates: 0, // Date (timestamp/date) leaf values
    list_items: 0, // total elements over all lists
    object_fields: 0, // total keys over all structs and maps
    key_bytes: 0, // total UTF-8 bytes of struct field names / map keys
    int_sum: 0n, // sum of all integer leaf values (int32/int64, integral numbers)
  }
}

/** Visit every decoded value (forces full materialisation of nested data). */
function digest(v, c) {
  if (v === undefined || v === null) { c.nulls++; return }
  switch (typeof v) {
  case 'string':
    c.values++; c.strings++; c.string_bytes += Buffer.byteLength(v, 'utf8'); return
  case 'boolean':
    c.values++; if (v) c.true++; else c.false++; return
  case 'bigint':
    c.values++; c.int_sum += v; return
  case 'number':
    c.values++; if (Number.isSafeInteger(v)) c.int_sum += BigInt(v); return
  }
  if (v instanceof Date) { c.values++; c.dates++; return }
  if (v instanceof Uint8Array) { c.values++; c.bytes += v.byteLength; return }
  if (Array.isArray(v) || ArrayBuffer.isView(v)) {
    c.list_items += v.length
    for (let i = 0; i < v.length; i++) digest(v[i], c)
    return
  }
  if (typeof v === 'object') {
    for (const k of Object.keys(v)) {
      c.object_fields++
      c.key_bytes += Buffer.byteLength(k, 'utf8')
      digest(v[k], c)
    }
    return
  }
  c.values++ // anything else (should not happen)
}

async function readOne(file) {
  const buf = await fs.readFile(file)
  // exact-sized ArrayBuffer (small Buffers share node's allocation pool)
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const metadata = parquetMetadata(ab)
  const metadataRows = Number(metadata.num_rows)
  const columns = parquetSchema(metadata).children.map(child => child.element.name)
  const rows = await parquetReadObjects({ file: ab, metadata, compressors })

  const checksum = newChecksum()
  rows.forEach((row, i) => {
    for (const col of columns) {
      if (!(col in row)) throw new Error(`row ${i} is missing column ${JSON.stringify(col)}`)
      digest(row[col], checksum)
    }
  })
  checksum.int_sum = bigToJson(checksum.int_sum)

  let first = null
  if (rows.length) {
    first = {}
    for (const col of columns) first[col] = toPlain(rows[0][col])
  }
  return { rows: rows.length, metadata_rows: metadataRows, columns, first, checksum }
}

async function main() {
  const dir = process.argv[2]
  if (!dir || process.argv.length > 3) {
    process.stderr.write('usage: node read-all.mjs DIR\n')
    return 2
  }
  let files
  try {
    files = await walk(dir, [])
  } catch (err) {
    process.stderr.write(`read-all: cannot walk ${dir}: ${err?.message ?? err}\n`)
    return 2
  }
  if (!files.length) {
    process.stderr.write(`read-all: no .parquet files under ${dir}\n`)
    return 2
  }

  let failures = 0
  for (const file of files) {
    const rel = path.relative(dir, file).split(path.sep).join('/')
    try {
      const res = await readOne(file)
      process.stdout.write(JSON.stringify({ path: rel, ...res }) + '\n')
      if (res.rows !== res.metadata_rows) {
        failures++
        process.stderr.write(`read-all: ${rel}: decoded ${res.rows} rows but footer num_rows is ${res.metadata_rows}\n`)
      }
    } catch (err) {
      failures++
      process.stderr.write(`read-all: ${rel}: failed to decode: ${err?.stack ?? err}\n`)
    }
  }
  if (failures) {
    process.stderr.write(`read-all: ${failures} of ${files.length} parquet files failed\n`)
    return 1
  }
  return 0
}

process.exitCode = await main()
