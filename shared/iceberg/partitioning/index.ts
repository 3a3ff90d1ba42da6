// Public surface of shared/iceberg/partitioning: Iceberg's partition transforms (identity, year,
// month, day, hour, bucket[N], truncate[W], void), the bucket hash, partition paths, and a
// partitioner compiled per spec and schema for the record path. What is not re-exported here is
// internal (bucket.ts; the path escaping in human.ts). The pyiceberg_*.py script serves the tests.
export { humanString } from './human.ts'
export { hashInt, hashLong, murmur3Hash32 } from './murmur3.ts'
export {
  type BoundPartitionField,
  bindPartitionSpec,
  compilePartitioner,
  type Partitioner,
  partitionPath,
  partitionType,
} from './partitioner.ts'
export {
  applyTransform,
  bucketHash,
  canTransform,
  compileTransform,
  parseTransform,
  type Transform,
  type TransformFunction,
  transformResultType,
  transformToString,
} from './transform.ts'
