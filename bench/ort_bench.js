// Times one ONNX model with onnxruntime-node at its best settings (graphOptimizationLevel 'all',
// intraOpNumThreads THREADS, interOpNumThreads 1, sequential execution). Two modes:
//
// node ort_bench.js MODEL INPUT.bin N,C,H,W WARMUP REPEAT THREADS      (bench/compare.py)
//   Prints {"median_ms", "min_ms", "output": logits} as JSON.
//
// node ort_bench.js --serve MODEL THREADS [SPIN]                       (bench/onnx_vs_ort.py; SPIN 0: no spinning)
//   Creates the session once, prints {"ready": true, "version", "create_ms"}, then answers one JSON line per
//   request line on stdin, so that a driver can interleave rounds of this engine with another one without paying
//   session creation (graph optimisation of a 346 MB model) each round:
//     {"cmd": "time", "input": "x.bin", "shape": [N,C,H,W], "warmup": W, "repeat": R}  -> {"ms": [R run times]}
//     {"cmd": "logits", "input": "x.bin", "shape": [...], "output": "y.bin"} -> {"shape": [...]} (y.bin: float32)
//   An error answers {"error": "..."} and the server goes on.
const ort = require('onnxruntime-node');
const fs = require('fs');
const readline = require('readline');

// spin '0': idle pool threads sleep instead of spinning (for a machine busy with other work).
function sessionOptions(threads, spin = '1') {
  return {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential', extra: {session: {intra_op: {allow_spinning: spin}}},
  };
}

function readFeeds(session, input, shape) {
  const buf = fs.readFileSync(input);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
  return {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
}

async function timeRuns(session, feeds, warmup, repeat) {
  let out;
  for (let i = 0; i < warmup; ++i) out = await session.run(feeds);
  const ms = [];
  for (let i = 0; i < repeat; ++i) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return {ms, out};
}

async function once() {
  const [model, input, shapeStr, warmup, repeat, threads] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, sessionOptions(threads));
  const feeds = readFeeds(session, input, shapeStr.split(',').map(Number));
  const {ms, out} = await timeRuns(session, feeds, Number(warmup), Number(repeat));
  ms.sort((a, b) => a - b);
  const n = ms.length;
  const median = n % 2 ? ms[(n - 1) / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  const logits = out[session.outputNames[0]].data;
  console.log(JSON.stringify({median_ms: median, min_ms: ms[0], output: Array.from(logits)}));
}

async function serve() {
  const [model, threads, spin = '1'] = process.argv.slice(3);
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, sessionOptions(threads, spin));
  const version = require('onnxruntime-node/package.json').version;
  console.log(JSON.stringify({ready: true, version, create_ms: Number(process.hrtime.bigint() - t0) / 1e6}));
  const feedsByInput = new Map();  // the same input file is read once
  for await (const line of readline.createInterface({input: process.stdin})) {
    if (!line.trim()) continue;
    try {
      const req = JSON.parse(line);
      const key = req.input + ':' + req.shape.join(',');
      if (!feedsByInput.has(key)) feedsByInput.set(key, readFeeds(session, req.input, req.shape));
      const feeds = feedsByInput.get(key);
      if (req.cmd === 'time') {
        const {ms} = await timeRuns(session, feeds, req.warmup, req.repeat);
        console.log(JSON.stringify({ms}));
      } else if (req.cmd === 'logits') {
        const y = (await session.run(feeds))[session.outputNames[0]];
        fs.writeFileSync(req.output, Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
        console.log(JSON.stringify({shape: y.dims}));
      } else {
        console.log(JSON.stringify({error: `unknown cmd '${req.cmd}' (time or logits)`}));
      }
    } catch (e) {
      console.log(JSON.stringify({error: String(e)}));
    }
  }
}

(process.argv[2] === '--serve' ? serve() : once()).catch((e) => {
  console.error(e);
  process.exit(1);
});
