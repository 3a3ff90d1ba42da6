// Measures the uploader's throughput for one 64 MiB segment (streamed put + size check), to the
// local filesystem and to the stack's Azurite, median of 3 runs. Not a test: run it by hand,
//   node integration/upload/throughput.ts [sizeMiB] [runs]
// Random bytes stand in for the Parquet file: the uploader does not read the data it streams.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ReadySegment, Uploader } from '../../participant/upload/index.ts'
import { AzureBlobStorage, LocalFileStorage, type ObjectStorage } from '../../shared/storage/index.ts'
import { azuriteLocation } from '../catalog/probe.ts'
import { endpoints, uniqueName } from '../harness.ts'

const sizeMiB = Number(process.argv[2] ?? 64)
const runs = Number(process.argv[3] ?? 3)
const directory = await mkdtemp(join(tmpdir(), 'floe-upload-throughput-'))

function segmentOf(localPath: string, sizeBytes: number): ReadySegment {
  return {
    uuid: randomUUID(),
    localPath,
    topic: 'bench',
    partition: 0,
    start: 0n,
    end: 1n,
    partitionPath: '',
    dataFile: { fileFormat: 'PARQUET', specId: 0, partition: {}, recordCount: 1n, fileSizeInBytes: BigInt(sizeBytes) },
    bloomFilters: [],
    sizeBytes,
  }
}

async function measure(name: string, storage: ObjectStorage, tableData: string, localPath: string, size: number) {
  const uploader = new Uploader({ storage })
  const rates: number[] = []
  for (let run = 0; run < runs; run++) {
    const segment = segmentOf(localPath, size)
    const started = performance.now()
    const dataFile = await uploader.upload(segment, tableData)
    const seconds = (performance.now() - started) / 1000
    rates.push(size / 1e6 / seconds)
    await storage.delete(dataFile.filePath)
  }
  const sorted = [...rates].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]!
  console.log(
    `${name}: ${sizeMiB} MiB, runs ${rates.map((r) => r.toFixed(0)).join(' / ')} MB/s, median ${median.toFixed(0)} MB/s`,
  )
}

try {
  const size = sizeMiB * 1024 * 1024
  const localPath = join(directory, 'segment.parquet')
  await writeFile(localPath, randomBytes(size))
  await measure('local filesystem', new LocalFileStorage(), `file://${directory}/warehouse/data`, localPath, size)
  const azure = new AzureBlobStorage({ connectionString: endpoints().azurite.connectionString })
  await measure('Azurite', azure, azuriteLocation(`${uniqueName('floe-throughput')}/data`), localPath, size)
} finally {
  await rm(directory, { recursive: true, force: true })
}
