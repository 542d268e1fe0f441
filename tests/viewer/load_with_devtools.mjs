// load_with_devtools.mjs -- what Chrome DevTools' Performance panel makes of
// a trace-event JSON file, printed as JSON for scripts/traceviewer.py:
//
//     node load_with_devtools.mjs ENGINE_DIR TRACE.json
//
// ENGINE_DIR is where npm installed tests/viewer/package.json (build/viewer):
// its @paulirish/trace_engine is the panel's own trace engine, published to
// run in Node. The file is parsed by the engine's model with every handler,
// as the panel does; then, for each thread the engine built:
//   {pid, tid, name, slices: [[name, ts, dur, messageId], ...], tree}
// where slices are the complete ("X") events the engine put on the thread,
// in its order, and tree counts the slices its flame chart holds (the engine
// drops a slice that starts inside another and ends after it); and each flow
// the engine paired: [[pid, tid, ts, name, messageId], ...], its events in
// the engine's order. Times are the engine's own numbers.
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [engineDir, file] = process.argv.slice(2);
const Trace = await import(pathToFileURL(
    path.join(engineDir, 'node_modules/@paulirish/trace_engine/models/trace/trace.js')).href);

// The engine takes DOMRect from the browser (its README: polyfill it in Node).
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, {x, y, width, height});
  }
};

const json = JSON.parse(fs.readFileSync(file, 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(json.traceEvents ?? json);
const data = model.parsedTrace().data;

const messageId = event => event.args?.messageId ?? null;
const threads = [];
for (const [pid, process] of data.Renderer.processes) {
  for (const [tid, thread] of process.threads) {
    const slices = thread.entries.filter(e => e.ph === 'X');
    const inTree = slices.filter(e => data.Renderer.entryToNode.has(e)).length;
    threads.push({
      pid, tid, name: thread.name ?? null,
      slices: slices.map(e => [e.name, e.ts, e.dur ?? 0, messageId(e)]),
      tree: inTree,
    });
  }
}
const flows = data.Flows.flows.map(flow => flow.map(e => [e.pid, e.tid, e.ts, e.name, messageId(e)]));
process.stdout.write(JSON.stringify({threads, flows}));
