// The participant: per-partition record path — consume, map, WAL segments, upload, report
// (issue #4). Imports protocol/ and shared/, never coordinator/.
export {}
