#!/usr/bin/env node
// memo's ONNX Runtime worker. It reads run requests from fd 3 and writes results to fd 4, one at
// a time, until fd 3 closes. Each frame is a little-endian u64 length and a payload:
//
//   request  u64 onnx length, onnx bytes,
//            u32 inputs,  each: str name, u8 type (0 float32, 1 float64), u32 rank, i64 dims, data
//            u32 outputs, each: str name
//   result   u8 status (0 ok, 1 error), f64 milliseconds (session creation and run), str message,
//            u32 outputs, each: u32 rank, i64 dims, float64 data
//
// (str: u32 length and UTF-8 bytes.) Usage: node worker.js [--optimize disabled|basic|extended|all]
'use strict';
const fs = require('fs');
const net = require('net');
const ort = require('onnxruntime-node');

const level = (() => {
  const i = process.argv.indexOf('--optimize');
  return i >= 0 ? process.argv[i + 1] : 'disabled';
})();
const options = {
  graphOptimizationLevel: level,
  executionMode: 'sequential',
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  // No arena and no memory pattern: a session lives for one run, and both roughly double the time
  // it takes to create one (and the arena would hide a kernel's own allocations from memory figures).
  enableCpuMemArena: false,
  enableMemPattern: false,
  logSeverityLevel: 3,
};

class Reader {
  constructor(buf) { this.buf = buf; this.at = 0; }
  u8() { const v = this.buf.readUInt8(this.at); this.at += 1; return v; }
  u32() { const v = this.buf.readUInt32LE(this.at); this.at += 4; return v; }
  i64() { const v = Number(this.buf.readBigInt64LE(this.at)); this.at += 8; return v; }
  u64() { const v = Number(this.buf.readBigUInt64LE(this.at)); this.at += 8; return v; }
  bytes(n) {
    if (this.at + n > this.buf.length) throw new Error('truncated request');
    const v = this.buf.subarray(this.at, this.at + n); this.at += n; return v;
  }
  str() { return this.bytes(this.u32()).toString('utf8'); }
}

function decode(frame) {
  const r = new Reader(frame);
  const model = r.bytes(r.u64());
  const feeds = {};
  for (let n = r.u32(); n > 0; --n) {
    const name = r.str();
    const type = r.u8();
    const dims = [];
    for (let k = r.u32(); k > 0; --k) dims.push(r.i64());
    const count = dims.reduce((a, b) => a * b, 1);
    const size = type === 1 ? 8 : 4;
    // Copy into an aligned buffer: typed arrays need an offset that is a multiple of their size.
    const raw = Buffer.from(r.bytes(count * size));
    const data = type === 1 ? new Float64Array(raw.buffer, raw.byteOffset, count) : new Float32Array(raw.buffer, raw.byteOffset, count);
    feeds[name] = new ort.Tensor(type === 1 ? 'float64' : 'float32', data, dims);
  }
  const outputs = [];
  for (let n = r.u32(); n > 0; --n) outputs.push(r.str());
  return { model, feeds, outputs };
}

function encode(status, ms, message, tensors) {
  const parts = [];
  const text = Buffer.from(message, 'utf8');
  const head = Buffer.alloc(1 + 8 + 4 + text.length + 4);
  head.writeUInt8(status, 0);
  head.writeDoubleLE(ms, 1);
  head.writeUInt32LE(text.length, 9);
  text.copy(head, 13);
  head.writeUInt32LE(tensors.length, 13 + text.length);
  parts.push(head);
  for (const t of tensors) {
    const h = Buffer.alloc(4 + 8 * t.dims.length);
    h.writeUInt32LE(t.dims.length, 0);
    t.dims.forEach((d, i) => h.writeBigInt64LE(BigInt(d), 4 + 8 * i));
    parts.push(h);
    const values = t.data instanceof Float64Array ? t.data : new Float64Array(t.data);  // a typed copy: fast
    parts.push(Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  }
  const body = Buffer.concat(parts);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(body.length), 0);
  return Buffer.concat([len, body]);
}

function writeAll(buf) {
  let at = 0;
  while (at < buf.length) {
    try {
      at += fs.writeSync(4, buf, at, buf.length - at);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

async function serve(frame) {
  const start = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - start) / 1e6;
  let session = null;
  try {
    const q = decode(frame);
    session = await ort.InferenceSession.create(q.model, options);
    const result = await session.run(q.feeds, q.outputs);
    writeAll(encode(0, ms(), '', q.outputs.map((name) => result[name])));
  } catch (e) {
    writeAll(encode(1, ms(), String(e && e.message ? e.message : e), []));
  }
  // Released after the answer is on its way: the campaign need not wait for it.
  if (session) await session.release().catch(() => {});
}

// Frames arrive in chunks (64 KiB from a pipe); they are joined once a whole frame is there, not
// chunk by chunk, which would copy a large model's bytes over and over. Requests are served one
// after the other.
let chunks = [];
let buffered = 0;
let busy = Promise.resolve();
// A socket over the pipe (epoll), not a file stream (reads through libuv's thread pool, with a
// hop per chunk).
const input = new net.Socket({ fd: 3, readable: true, writable: false });
input.on('data', (chunk) => {
  chunks.push(chunk);
  buffered += chunk.length;
  for (;;) {
    if (buffered < 8) return;
    if (chunks[0].length < 8) chunks = [Buffer.concat(chunks)];
    const n = Number(chunks[0].readBigUInt64LE(0));
    if (buffered < 8 + n) return;
    const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const frame = Buffer.from(all.subarray(8, 8 + n));
    const rest = all.subarray(8 + n);
    chunks = rest.length ? [rest] : [];
    buffered = rest.length;
    busy = busy.then(() => serve(frame));
  }
});
input.on('end', () => busy.then(() => process.exit(0)));
input.on('close', () => busy.then(() => process.exit(0)));
input.on('error', () => process.exit(0));
