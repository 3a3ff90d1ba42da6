// Lossless JSON: 64-bit integers (snapshot ids, sequence numbers, sizes) survive parse and
// stringify as bigint. Files not re-exported here are internal to shared/json.
export {
  type JsonObject,
  type JsonValue,
  parseJson,
  parseJsonBytes,
  stringifyJson,
  stringifyJsonBytes,
} from './lossless.ts'
