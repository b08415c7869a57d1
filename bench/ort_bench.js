// Times one ONNX model with onnxruntime-node: node ort_bench.js MODEL INPUT.bin N,C,H,W WARMUP REPEAT THREADS
// Prints {"median_ms", "min_ms", "output": first 8 logits} as JSON.
const ort = require('onnxruntime-node');
const fs = require('fs');

async function main() {
  const [model, input, shapeStr, warmup, repeat, threads] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const buf = fs.readFileSync(input);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
  const shape = shapeStr.split(',').map(Number);
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
  let out;
  for (let i = 0; i < Number(warmup); ++i) out = await session.run(feeds);
  const ms = [];
  for (let i = 0; i < Number(repeat); ++i) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const n = ms.length;
  const median = n % 2 ? ms[(n - 1) / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  const logits = out[session.outputNames[0]].data;
  console.log(JSON.stringify({median_ms: median, min_ms: ms[0], output: Array.from(logits)}));
}
main().catch((e) => { console.error(e); process.exit(1); });
