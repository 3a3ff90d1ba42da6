// Upload throughput to Azure Blob (Azurite of the local stack): 64 MiB of random bytes through
// @azure/storage-blob's upload paths, the numbers behind AzureBlobStorage's block size and
// concurrency (docs/decisions.md, "Azure uploads"). Needs the local stack (`npm run stack -- up`).
// Run with `node bench/azure-upload.bench.ts [runs]`; prints the median MB/s of each path.
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { BlobServiceClient } from '@azure/storage-blob'
import { readEndpoints, stackDir } from '../integration/stack/index.ts'

const runs = Number(process.argv[2] ?? 3)
const mib = 1024 * 1024
const data = randomBytes(64 * mib)
const { connectionString, container } = readEndpoints(stackDir()).azurite
const blobs = BlobServiceClient.fromConnectionString(connectionString).getContainerClient(container)

const paths: [string, (name: string) => Promise<unknown>][] = [
  [
    'uploadData, 8 MiB blocks, concurrency 4',
    (name) => blobs.getBlockBlobClient(name).uploadData(data, { blockSize: 8 * mib, concurrency: 4 }),
  ],
  [
    'uploadData, single shot',
    (name) => blobs.getBlockBlobClient(name).uploadData(data, { maxSingleShotSize: 256 * mib }),
  ],
  [
    'uploadStream, 8 MiB buffers, concurrency 4',
    (name) => blobs.getBlockBlobClient(name).uploadStream(Readable.from([data]), 8 * mib, 4),
  ],
]

for (const [label, upload] of paths) {
  const rates: number[] = []
  for (let run = 0; run < runs; run++) {
    const name = `bench/azure-upload-${process.pid}-${run}`
    const started = performance.now()
    await upload(name)
    rates.push(data.length / mib / ((performance.now() - started) / 1000))
    await blobs.getBlockBlobClient(name).deleteIfExists()
  }
  rates.sort((a, b) => a - b)
  console.log(`${label}: ${rates[Math.floor(rates.length / 2)]?.toFixed(1)} MB/s (median of ${runs})`)
}
