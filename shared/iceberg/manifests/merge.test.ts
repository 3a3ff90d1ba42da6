import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import {
  defaultManifestMergePolicy,
  ManifestEntryStatus,
  type ManifestFile,
  type ManifestMergePolicy,
  type ManifestMergeStep,
  manifestFileOf,
  manifestMergePolicy,
  mergeManifests,
  planManifestMerge,
  readManifest,
  readManifestList,
  writeManifest,
  writeManifestList,
} from './index.ts'
import { packEnd } from './merge.ts'
import { dataFile, daySpec, listed, serializeBoundForTests, tableSchema } from './testing.ts'

const current = 900n
const policy = (minCountToMerge: number, targetSizeBytes = 100, enabled = true): ManifestMergePolicy => ({
  enabled,
  minCountToMerge,
  targetSizeBytes,
})
const m = (name: string, length: number, extra: Partial<ManifestFile> = {}) => listed(name, length, extra)
const fresh = (name: string, length: number, extra: Partial<ManifestFile> = {}) =>
  listed(name, length, { addedSnapshotId: current, sequenceNumber: null, minSequenceNumber: null, ...extra })

/** A plan as short strings: "name" kept, "[a+b]" merged. */
function show(steps: ManifestMergeStep[]): string[] {
  return steps.map((s) =>
    s.action === 'keep' ? s.manifest.manifestPath : `[${s.manifests.map((x) => x.manifestPath).join('+')}]`,
  )
}

describe('planManifestMerge', () => {
  const cases: [string, ManifestFile[], ManifestMergePolicy, string[], string[]?][] = [
    ['nothing to list plans nothing', [], policy(3), []],
    ['one manifest is kept', [fresh('new', 10)], policy(1), ['new']],
    [
      'a bin holding the new manifest waits for the minimum count',
      [fresh('new', 10), m('a', 10)],
      policy(3),
      ['new', 'a'],
    ],
    [
      'a bin holding the new manifest merges at the minimum count',
      [fresh('new', 10), m('a', 10), m('b', 10)],
      policy(3),
      ['[new+a+b]'],
    ],
    [
      'the default minimum of 100 keeps 99 small manifests apart',
      [fresh('new', 1), ...Array.from({ length: 98 }, (_, i) => m(`o${i}`, 1))],
      defaultManifestMergePolicy,
      ['new', ...Array.from({ length: 98 }, (_, i) => `o${i}`)],
    ],
    [
      'the default minimum of 100 merges 100 small manifests into one',
      [fresh('new', 1), ...Array.from({ length: 99 }, (_, i) => m(`o${i}`, 1))],
      defaultManifestMergePolicy,
      [`[${['new', ...Array.from({ length: 99 }, (_, i) => `o${i}`)].join('+')}]`],
    ],
    [
      'bins are packed from the end, so the newest bin is the under-filled one',
      [fresh('new', 10), m('a', 60), m('b', 50), m('c', 40)],
      policy(3),
      ['new', 'a', '[b+c]'],
    ],
    ['a bin may reach the target size exactly', [fresh('new', 50), m('a', 50)], policy(2), ['[new+a]']],
    ['one byte over the target starts a new bin', [fresh('new', 51), m('a', 50)], policy(2), ['new', 'a']],
    [
      'a manifest above the target size stays alone and is never rewritten',
      [fresh('new', 10), m('big', 500), m('c', 10)],
      policy(1),
      ['new', 'big', 'c'],
    ],
    [
      'full bins without the new manifest merge whatever the minimum count',
      [fresh('new', 30), m('a', 30), m('b', 30), m('c', 30), m('d', 30)],
      policy(100, 60),
      ['new', '[a+b]', '[c+d]'],
    ],
    [
      'each partition spec is its own group, highest spec id first',
      [fresh('new', 10, { partitionSpecId: 1 }), m('a', 10), m('b', 10, { partitionSpecId: 1 }), m('c', 10)],
      policy(2),
      ['[new+b]', '[a+c]'],
    ],
    [
      'an older spec group merges even while the new manifest waits for the minimum',
      [fresh('new', 10, { partitionSpecId: 1 }), m('a', 10), m('b', 10, { partitionSpecId: 1 }), m('c', 10)],
      policy(100),
      ['new', 'b', '[a+c]'],
    ],
    [
      'delete manifests merge apart from data manifests and are listed after them',
      [m('d1', 10, { content: 'deletes' }), fresh('new', 10), m('d2', 10, { content: 'deletes' }), m('a', 10)],
      policy(2),
      ['[new+a]', '[d1+d2]'],
    ],
    [
      'the first delete manifest waits for the minimum like the new data manifest',
      [fresh('new', 10), m('d1', 10, { content: 'deletes' }), m('d2', 10, { content: 'deletes' })],
      policy(3),
      ['new', 'd1', 'd2'],
    ],
    [
      'disabled merging keeps every manifest, data before deletes',
      [m('d1', 1, { content: 'deletes' }), fresh('new', 1), m('a', 1), m('b', 1)],
      policy(1, 100, false),
      ['new', 'a', 'b', 'd1'],
    ],
    [
      'an earlier manifest left with only deleted files is dropped',
      [
        fresh('new', 10),
        m('gone', 10, { addedFilesCount: 0, existingFilesCount: 0, deletedFilesCount: 3 }),
        m('a', 10),
      ],
      policy(3),
      ['new', 'a'],
      ['gone'],
    ],
    [
      'dropping applies with merging disabled too',
      [m('gone', 10, { addedFilesCount: 0, existingFilesCount: 0 }), m('a', 10)],
      policy(3, 100, false),
      ['a'],
      ['gone'],
    ],
    [
      "this snapshot's own manifest is kept even with no live file",
      [fresh('new', 10, { addedFilesCount: 0, existingFilesCount: 0, deletedFilesCount: 1 })],
      policy(1),
      ['new'],
    ],
    [
      'unknown counts count as live files',
      [
        m('v1', 10, { addedFilesCount: null, existingFilesCount: 0 }),
        m('v1b', 10, { addedFilesCount: 0, existingFilesCount: null }),
      ],
      policy(3),
      ['v1', 'v1b'],
    ],
    [
      'without a new manifest the first listed one plays its part',
      [m('a', 10), m('b', 10), m('c', 10)],
      policy(4),
      ['a', 'b', 'c'],
    ],
  ]
  for (const [name, manifests, p, expected, dropped = []] of cases) {
    test(name, () => {
      const plan = planManifestMerge({ manifests, snapshotId: current, policy: p })
      assert.deepEqual(show(plan.steps), expected)
      assert.deepEqual(
        plan.dropped.map((d) => d.manifestPath),
        dropped,
      )
    })
  }

  test('every plan over small inputs keeps order, merges only valid bins and loses no manifest', () => {
    const weights = [10, 40, 70, 110]
    const target = 100
    let plans = 0
    for (let size = 0; size <= 6; size += 1) {
      for (let code = 0; code < weights.length ** size; code += 1) {
        const manifests = Array.from({ length: size }, (_, i) => {
          const w = weights[Math.floor(code / weights.length ** i) % weights.length] as number
          return i === 0 ? fresh(`m${i}`, w) : m(`m${i}`, w)
        })
        for (const minCount of [1, 2, 3, 100]) {
          const { steps, dropped } = planManifestMerge({
            manifests,
            snapshotId: current,
            policy: policy(minCount, target),
          })
          plans += 1
          assert.deepEqual(dropped, [])
          const flat = steps.flatMap((s) => (s.action === 'keep' ? [s.manifest] : s.manifests))
          assert.deepEqual(flat, manifests)
          for (const step of steps) {
            if (step.action !== 'merge') continue
            assert.ok(step.manifests.length >= 2)
            assert.ok(step.manifests.reduce((sum, x) => sum + Number(x.manifestLength), 0) <= target)
            if (step.manifests.includes(manifests[0] as ManifestFile)) assert.ok(step.manifests.length >= minCount)
          }
        }
      }
    }
    assert.equal(plans, 4 * (1 + 4 + 16 + 64 + 256 + 1024 + 4096))
  })
})

describe('packEnd', () => {
  test('bins are maximal from the end: each bin is closed only by an item that does not fit', () => {
    const weights = [1, 3, 5, 8]
    for (let size = 1; size <= 6; size += 1) {
      for (let code = 0; code < weights.length ** size; code += 1) {
        const items = Array.from(
          { length: size },
          (_, i) => weights[Math.floor(code / weights.length ** i) % 4] as number,
        )
        const bins = packEnd(items, (w) => w, 8)
        assert.deepEqual(bins.flat(), items)
        const sum = (bin: number[]) => bin.reduce((a, b) => a + b, 0)
        for (let i = 0; i + 1 < bins.length; i += 1) {
          const closer = (bins[i] as number[]).at(-1) as number
          assert.ok(sum(bins[i + 1] as number[]) + closer > 8)
        }
        for (const bin of bins) assert.ok(bin.length === 1 || sum(bin) <= 8)
      }
    }
  })
})

describe('manifestMergePolicy', () => {
  const cases: [Record<string, string>, ManifestMergePolicy][] = [
    [{}, { enabled: true, minCountToMerge: 100, targetSizeBytes: 8_388_608 }],
    [
      {
        'commit.manifest-merge.enabled': 'FALSE',
        'commit.manifest.min-count-to-merge': '5',
        'commit.manifest.target-size-bytes': '1024',
      },
      { enabled: false, minCountToMerge: 5, targetSizeBytes: 1024 },
    ],
  ]
  for (const [properties, expected] of cases) {
    test(`properties ${JSON.stringify(properties)} give ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(manifestMergePolicy(properties), expected)
    })
  }
  const refused: Record<string, string>[] = [
    { 'commit.manifest-merge.enabled': 'yes' },
    { 'commit.manifest.min-count-to-merge': 'ten' },
    { 'commit.manifest.target-size-bytes': '8.5' },
  ]
  for (const bad of refused) {
    test(`properties ${JSON.stringify(bad)} are refused as configuration`, () => {
      assert.throws(
        () => manifestMergePolicy(bad),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
})

describe('mergeManifests', () => {
  const s1 = 3051729675574597001n
  const s2 = 3051729675574597002n
  const s3 = 3051729675574597003n
  const write = (snapshotId: bigint, entries: Parameters<typeof writeManifest>[0]['entries']) =>
    writeManifest({
      schema: tableSchema,
      spec: daySpec,
      formatVersion: 2,
      content: 'data',
      snapshotId,
      entries,
      serializeBound: serializeBoundForTests,
    })
  const file = (n: number) => dataFile(n, { ts_day: 19_000 + n, category: `c${n}` })
  // Snapshot 1 added f1 and f2; snapshot 2 rewrote f0 as existing and deleted f4; snapshot 3
  // (this commit) adds f5 and deletes f6.
  const a = write(s1, [
    { status: ManifestEntryStatus.ADDED, dataFile: file(1) },
    { status: ManifestEntryStatus.ADDED, dataFile: file(2) },
  ])
  const b = write(s2, [
    { status: 0, snapshotId: 11n, sequenceNumber: 0n, fileSequenceNumber: 1n, dataFile: file(0) },
    { status: 2, snapshotId: s2, sequenceNumber: 1n, fileSequenceNumber: 1n, dataFile: file(4) },
  ])
  const c = write(s3, [
    { status: ManifestEntryStatus.ADDED, dataFile: file(5) },
    { status: 2, snapshotId: s3, sequenceNumber: 1n, fileSequenceNumber: 1n, dataFile: file(6) },
  ])
  const listedA = { ...manifestFileOf(a, 'a.avro'), sequenceNumber: 1n, minSequenceNumber: 1n }
  const listedB = { ...manifestFileOf(b, 'b.avro'), sequenceNumber: 2n, minSequenceNumber: 0n }
  const listedC = manifestFileOf(c, 'c.avro')
  const merged = mergeManifests({
    schema: tableSchema,
    spec: daySpec,
    snapshotId: s3,
    serializeBound: serializeBoundForTests,
    manifests: [
      { manifest: listedC, bytes: c.bytes },
      { manifest: listedA, bytes: a.bytes },
      { manifest: listedB, bytes: b.bytes },
    ],
  })

  test('files of earlier snapshots become EXISTING with their snapshot ids and sequence numbers', () => {
    const entries = readManifest(merged.bytes).entries
    assert.deepEqual(
      entries.map((e) => [
        e.dataFile.filePath.split('/').at(-1),
        e.status,
        e.snapshotId,
        e.sequenceNumber,
        e.fileSequenceNumber,
      ]),
      [
        ['5.parquet', ManifestEntryStatus.ADDED, s3, null, null],
        ['6.parquet', ManifestEntryStatus.DELETED, s3, 1n, 1n],
        ['1.parquet', ManifestEntryStatus.EXISTING, s1, 1n, 1n],
        ['2.parquet', ManifestEntryStatus.EXISTING, s1, 1n, 1n],
        ['0.parquet', ManifestEntryStatus.EXISTING, 11n, 0n, 1n],
      ],
    )
  })

  test('the merged manifest summary counts what it now holds', () => {
    assert.deepEqual(
      [
        merged.summary.addedFilesCount,
        merged.summary.existingFilesCount,
        merged.summary.deletedFilesCount,
        merged.summary.addedRowsCount,
        merged.summary.existingRowsCount,
        merged.summary.minSequenceNumber,
        merged.summary.addedSnapshotId,
      ],
      [1, 3, 1, 105n, 303n, 0n, s3],
    )
    assert.deepEqual(merged.summary.partitions?.[0]?.lowerBound, serializeBoundForTests('date', 19_000))
    assert.deepEqual(merged.summary.partitions?.[0]?.upperBound, serializeBoundForTests('date', 19_006))
  })

  test('the added file inherits the new snapshot sequence number through the manifest list', () => {
    const list = readManifestList(
      writeManifestList({
        snapshotId: s3,
        parentSnapshotId: s2,
        sequenceNumber: 3n,
        manifests: [manifestFileOf(merged, 'merged.avro')],
      }),
    )
    const manifest = list.manifests[0] as ManifestFile
    assert.deepEqual([manifest.sequenceNumber, manifest.minSequenceNumber], [3n, 0n])
    const added = readManifest(merged.bytes, { inheritFrom: manifest }).entries[0]
    assert.deepEqual([added?.snapshotId, added?.sequenceNumber, added?.fileSequenceNumber], [s3, 3n, 3n])
  })

  test('manifests of another partition spec are refused', () => {
    assert.throws(
      () =>
        mergeManifests({
          schema: tableSchema,
          spec: { ...daySpec, 'spec-id': 4 },
          snapshotId: s3,
          serializeBound: serializeBoundForTests,
          manifests: [{ manifest: listedA, bytes: a.bytes }],
        }),
      (e) => isFloeError(e, 'INVARIANT_BROKEN'),
    )
  })

  test('an earlier manifest read without its list record cannot lose its sequence numbers', () => {
    assert.throws(
      () =>
        mergeManifests({
          schema: tableSchema,
          spec: daySpec,
          snapshotId: s3,
          serializeBound: serializeBoundForTests,
          manifests: [{ manifest: { ...listedA, sequenceNumber: null }, bytes: a.bytes }],
        }),
      (e) => isFloeError(e, 'INVARIANT_BROKEN'),
    )
  })
})
