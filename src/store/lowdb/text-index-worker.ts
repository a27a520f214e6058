/**
 * The article text index in a worker thread: it reads the article files itself at start, so
 * tokenising 100,000 bodies never runs on the server's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { loadArticleFiles } from './layout.ts';
import { TextIndex, textFieldsOf, type TextIndexMessage, type TextIndexReply } from './text-index.ts';

const { dir } = workerData as { dir: string };
const index = new TextIndex();
const port = parentPort!;
const reply = (message: TextIndexReply) => port.postMessage(message);

// Messages posted while the scan runs wait in the port's queue and are applied after it, in order:
// a write that lands during the scan is indexed once more, with its newest text, so nothing is stale.
const started = performance.now();
loadArticleFiles<Parameters<typeof textFieldsOf>[0] & { id: string }>(dir, (_file, record) => {
  index.add(record.id, textFieldsOf(record));
});
index.trim();
reply({
  type: 'ready',
  documents: index.size,
  ms: Math.round(performance.now() - started),
  heapMB: Math.round(getHeapStatistics().used_heap_size / 1048576),
});

port.on('message', (message: TextIndexMessage) => {
  if (message.type === 'add') index.add(message.id, message.fields);
  else if (message.type === 'remove') index.remove(message.id);
  else if (message.type === 'query') {
    const scores = index.query(message.text);
    const ids = [...scores.keys()];
    const values = Float64Array.from(scores.values());
    port.postMessage({ type: 'result', seq: message.seq, ids, scores: values } satisfies TextIndexReply, [values.buffer]);
  } else if (message.type === 'stats') {
    reply({ type: 'stats', seq: message.seq, documents: index.size, heapMB: Math.round(getHeapStatistics().used_heap_size / 1048576) });
  }
});
