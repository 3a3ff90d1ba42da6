// An encoder thread that dies on its first task, as a thread does that runs out of memory or hits
// a native fault: the pool must replace it and still deliver the row group (encoder-pool.test.ts).
import { parentPort } from 'node:worker_threads'

parentPort?.on('message', () => process.exit(7))
