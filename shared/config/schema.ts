// The shape of floe.yaml (the operator's contract, README "Configuration"), with its defaults.
// Cross-field rules of a dataset (mapping columns = schema columns, transforms on known columns)
// live in ./datasets.ts.
import { availableParallelism } from 'node:os'
import { z } from 'zod'

const hostPort = z.string().regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port')

/** A list may also be written as one comma-separated string (handy in environment overrides). */
function list<T extends z.ZodType>(item: T) {
  return z.preprocess(
    (value) =>
      typeof value === 'string'
        ? value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : value,
    z.array(item),
  )
}

/**
 * The cores a worker may use: FLOE_CORES when the launcher set it (bin/cores reads the cgroup's CPU
 * quota, which Node does not see), else every core of the machine, at most 64.
 */
export function availableCores(env: NodeJS.ProcessEnv = process.env): number {
  const launcher = Number(env.FLOE_CORES)
  const cores = Number.isInteger(launcher) && launcher >= 1 ? launcher : availableParallelism()
  return Math.min(cores, 64)
}

// Environment overrides arrive as strings; numbers and booleans written there are read as such.
const numeric = (v: unknown) => (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v)
const boolish = (v: unknown) => (v === 'true' ? true : v === 'false' ? false : v)
const boolean = () => z.preprocess(boolish, z.boolean())
const positive = z.preprocess(numeric, z.number().positive())
const positiveInt = z.preprocess(numeric, z.number().int().positive())

// A secret is read from a file the configuration names, or from the environment (the key's FLOE_*
// override); load.ts refuses one written in the YAML itself.
const secret = z.string().min(1)

/** PLAIN and SCRAM: a user and its password (`password` from FLOE_KAFKA__SASL__PASSWORD, or `passwordFile`). */
const kafkaPasswordSaslSchema = z
  .object({
    mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']),
    username: z.string().min(1),
    password: secret.optional(),
    passwordFile: z.string().min(1).optional(),
  })
  .strict()
  .refine((sasl) => (sasl.password === undefined) !== (sasl.passwordFile === undefined), {
    error: 'set one of passwordFile or FLOE_KAFKA__SASL__PASSWORD',
    path: ['password'],
  })

/**
 * OAUTHBEARER: a token from an OAuth 2 token endpoint by the client-credentials grant (the client
 * secret from FLOE_KAFKA__SASL__CLIENT_SECRET, or `clientSecretFile`), fetched again before it expires.
 */
const kafkaOauthSaslSchema = z
  .object({
    mechanism: z.literal('oauthbearer'),
    tokenEndpointUrl: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }),
    clientId: z.string().min(1),
    clientSecret: secret.optional(),
    clientSecretFile: z.string().min(1).optional(),
    scope: z.string().min(1).optional(),
  })
  .strict()
  .refine((sasl) => (sasl.clientSecret === undefined) !== (sasl.clientSecretFile === undefined), {
    error: 'set one of clientSecretFile or FLOE_KAFKA__SASL__CLIENT_SECRET',
    path: ['clientSecret'],
  })

export const kafkaSaslSchema = z.discriminatedUnion('mechanism', [kafkaPasswordSaslSchema, kafkaOauthSaslSchema])

/**
 * TLS with the brokers. Each PEM comes from a file (`caFile`, `certFile`, `keyFile`) or from the
 * environment (FLOE_KAFKA__SSL__CA_PEM, __CERT_PEM, __KEY_PEM). Without a CA the system's are trusted.
 */
export const kafkaTlsSchema = z
  .object({
    caFile: z.string().min(1).optional(),
    caPem: z.string().min(1).optional(),
    certFile: z.string().min(1).optional(),
    certPem: z.string().min(1).optional(),
    keyFile: z.string().min(1).optional(),
    keyPem: secret.optional(),
    /** Whether the broker's certificate must name the host connected to. Off only for a broker behind an address its certificate does not name. */
    verifyHostname: boolean().default(true),
  })
  .strict()
  .refine((tls) => !(tls.caFile && tls.caPem), { error: 'set caFile or caPem, not both', path: ['caPem'] })
  .refine((tls) => !(tls.certFile && tls.certPem), { error: 'set certFile or certPem, not both', path: ['certPem'] })
  .refine((tls) => !(tls.keyFile && tls.keyPem), { error: 'set keyFile or keyPem, not both', path: ['keyPem'] })
  .refine((tls) => Boolean(tls.certFile || tls.certPem) === Boolean(tls.keyFile || tls.keyPem), {
    error: 'a client certificate needs its key, and a key its certificate',
    path: ['keyFile'],
  })

export const kafkaSchema = z
  .object({
    brokers: list(hostPort).pipe(z.array(hostPort).min(1, 'name at least one broker')),
    clientId: z.string().min(1).default('floe'),
    groupPrefix: z.string().min(1).default('floe'),
    controlTopic: z.string().min(1).default('floe-control'),
    sasl: kafkaSaslSchema.optional(),
    /** TLS to the brokers: `true` trusts the system's CAs, a section names the CA and client certificate. */
    ssl: z.union([boolean(), kafkaTlsSchema]).default(false),
    /** Where a partition the table has never seen starts when the group has no committed offset. */
    autoOffsetReset: z.enum(['earliest', 'latest']).default('earliest'),
    /**
     * How long the broker waits for a silent worker (a crash, a freeze, a partition of the
     * network) before its dataset partitions move to the others. Kafka brokers accept 6000 ms and
     * more by default (group.min.session.timeout.ms). Heartbeats go at a third of it, at most 3 s.
     */
    sessionTimeoutMs: positiveInt.default(30_000),
  })
  .strict()

export const catalogSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('rest'),
      uri: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }),
      warehouse: z.string().min(1).optional(),
      /** A static bearer token, from FLOE_CATALOG__TOKEN. */
      token: secret.optional(),
      /**
       * OAuth 2 client credentials, `client_id:client_secret` (Iceberg's `credential`): from
       * FLOE_CATALOG__CREDENTIAL or `credentialFile`. A token is fetched at start and renewed.
       */
      credential: secret.optional(),
      credentialFile: z.string().min(1).optional(),
      /** The scope the token is asked for (Iceberg's `scope`). */
      scope: z.string().min(1).default('catalog'),
      /** The token endpoint (Iceberg's `oauth2-server-uri`). Default `<uri>/v1/oauth/tokens`. */
      oauth2ServerUri: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
      /**
       * `vended-credentials`: ask the catalog for the table's storage credentials
       * (X-Iceberg-Access-Delegation) and write the dataset's files with them.
       */
      accessDelegation: z.literal('vended-credentials').optional(),
      /**
       * Each request's limit, connect to last byte. A commit without an answer by then is an
       * unknown outcome (looked for by its commit id), so a hung catalog never hangs a round.
       */
      requestTimeoutSeconds: positive.default(30),
    })
    .strict()
    .refine((c) => !(c.credential && c.credentialFile), {
      error: 'set credentialFile or FLOE_CATALOG__CREDENTIAL, not both',
      path: ['credential'],
    })
    .refine((c) => !(c.token && (c.credential || c.credentialFile)), {
      error: 'set a token or a credential, not both',
      path: ['token'],
    }),
  z
    .object({
      type: z.literal('sql'),
      /** SQLite: the file of the catalog. */
      path: z.string().min(1).optional(),
      /** PostgreSQL: `postgresql://user@host:port/database`, or host, port, database and user. */
      uri: z
        .string()
        .regex(/^postgres(ql)?:\/\/\S+$/, 'expected postgresql://user@host:port/database')
        .optional(),
      host: z.string().min(1).optional(),
      port: z.preprocess(numeric, z.number().int().min(1).max(65535)).optional(),
      database: z.string().min(1).optional(),
      user: z.string().min(1).optional(),
      /** From FLOE_CATALOG__PASSWORD, or `passwordFile`; unset for a server that trusts the user. */
      password: secret.optional(),
      passwordFile: z.string().min(1).optional(),
      connectTimeoutSeconds: positive.default(10),
      /** One statement's limit; a commit without an answer by then is an unknown outcome, looked for. */
      queryTimeoutSeconds: positive.default(30),
      name: z.string().min(1).default('floe'),
      warehouse: z.string().min(1, 'the warehouse location new tables go under'),
    })
    .strict()
    .refine((sql) => [sql.path, sql.uri, sql.host].filter((v) => v !== undefined).length === 1, {
      error: 'set one of path (a SQLite file), uri or host (a PostgreSQL server)',
      path: ['path'],
    })
    .refine((sql) => !(sql.password !== undefined && sql.passwordFile !== undefined), {
      error: 'set passwordFile or FLOE_CATALOG__PASSWORD, not both',
      path: ['password'],
    }),
])

/** Where a dataset's files go through: the top-level `storage`, or a dataset's own. */
export const storageBackendSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('local') }).strict(),
  z
    .object({
      type: z.literal('azure'),
      azure: z
        .object({
          /** Unset: the account's SAS tokens come from the catalog (catalog.accessDelegation). */
          connectionString: secret.optional(),
          /** The blob endpoint for vended credentials; default https://<account>.blob.core.windows.net. */
          blobEndpoint: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
          container: z.string().min(1),
        })
        .strict(),
    })
    .strict(),
  z
    .object({
      type: z.literal('s3'),
      s3: z
        .object({
          bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name (3-63 of a-z 0-9 . -)'),
          /** Key prefix every location must lie under; '' for the whole bucket. */
          prefix: z.string().default(''),
          /** Unset: AWS_REGION, else us-east-1. */
          region: z.string().min(1).optional(),
          /** An S3-compatible server (http://127.0.0.1:9000); unset for AWS's own endpoints. */
          endpoint: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
          forcePathStyle: boolean().default(false),
          /**
           * Static credentials, from FLOE_STORAGE__S3__ACCESS_KEY_ID, __SECRET_ACCESS_KEY and
           * __SESSION_TOKEN only; without them the AWS SDK's standard credential chain is used.
           */
          accessKeyId: secret.optional(),
          secretAccessKey: secret.optional(),
          sessionToken: secret.optional(),
        })
        .strict()
        .refine((s3) => (s3.accessKeyId === undefined) === (s3.secretAccessKey === undefined), {
          error: 'set both FLOE_STORAGE__S3__ACCESS_KEY_ID and FLOE_STORAGE__S3__SECRET_ACCESS_KEY, or neither',
          path: ['secretAccessKey'],
        }),
    })
    .strict(),
])

export const storageSchema = storageBackendSchema.default({ type: 'local' })

export const walSchema = z
  .object({
    dir: z.string().min(1),
    maxFileSizeBytes: positiveInt.default(64 * 1024 * 1024),
    maxFileAgeMinutes: positive.default(5),
    maxOpenSegmentsPerPartition: positiveInt.default(256),
    /**
     * How a worker lays out its WAL: `shared` (the default) writes one file per Iceberg partition
     * that every Kafka partition of the dataset on the worker appends to, so files per commit
     * follow the Iceberg partitions; `partition` writes one file per Kafka partition and Iceberg
     * partition.
     */
    layout: z.enum(['partition', 'shared']).default('shared'),
    diskHighWatermarkPct: z.preprocess(numeric, z.number().gt(5).lte(100)).default(80),
    /** Pause consuming while this many bytes of ready segments wait for upload. */
    maxPendingUploadBytes: positiveInt.default(1024 * 1024 * 1024),
    /** Pause consuming while open segments hold this much memory. */
    maxOpenSegmentMemoryBytes: positiveInt.default(512 * 1024 * 1024),
    compression: z.enum(['zstd', 'snappy', 'gzip', 'lz4', 'none']).default('zstd'),
    /**
     * A segment's row group is cut when its rows reach this many bytes (estimated, uncompressed)
     * or 100,000 rows. Encoding a row group allocates several times its size at once, and that
     * garbage, not the rows, set a worker's peak memory with 16 MiB groups: at 1,000 partitions
     * 4 MiB took the peak RSS from about 820 to 500 MiB and cost less CPU per event, not more
     * (docs/benchmarks.md, "Row-group size").
     */
    rowGroupBytes: z
      .preprocess(
        numeric,
        z
          .number()
          .int()
          .min(64 * 1024),
      )
      .default(4 * 1024 * 1024),
    /**
     * Threads that write WAL segments, the main thread included: with N >= 2 the main thread
     * fetches, decodes and buffers records while N - 1 encoder threads encode and compress the
     * Parquet row groups; 1 (or 0) does everything on the main thread. Default 1: handing a row
     * group to a thread (a structured clone of its values) costs the main thread about what
     * encoding it does, so a thread adds CPU and memory without draining faster
     * (docs/benchmarks.md, "Encoder threads in the shared layout").
     */
    encoderThreads: z.preprocess(numeric, z.number().int().min(0).max(256)).default(1),
    /**
     * The WAL volume's size for the disk watermark, when it should not be the filesystem's (a
     * shared disk, or a test that simulates a small volume). Unset: the filesystem's own size.
     */
    volumeSizeBytes: positiveInt.optional(),
  })
  .strict()

export const ingestionSchema = z
  .object({
    commitIntervalSeconds: positive.default(20),
    commitTimeoutSeconds: positive.default(30),
    drainTimeoutSeconds: positive.default(96),
    /** A record larger than this goes to the dead-letter topic. */
    maxRecordBytes: positiveInt.default(1024 * 1024),
    /**
     * Members of the dataset groups this worker runs, each on a thread of its own with its own WAL
     * folder (docs/architecture.md, "Members on threads"): a worker on two cores drains a backlog
     * about 1.7 times as fast with two. Default: the cores the worker may use (FLOE_CORES, which
     * bin/floe sets from the CPU quota, else the machine's).
     */
    threads: z.preprocess(numeric, z.number().int().min(1).max(64)).default(() => availableCores()),
    wal: walSchema,
  })
  .strict()

/**
 * Table maintenance (`floe maintain`, and the coordinator between rounds when enabled): the
 * snapshot history a table keeps, the size small files are compacted to, and when a file nothing
 * references counts as an orphan. Defaults are Iceberg's own where it has one
 * (history.expire.max-snapshot-age-ms: 5 days; min-snapshots-to-keep: 1; write.target-file-size-bytes:
 * 512 MiB, smaller here because a streamed table's partitions rarely reach it; rewrite_data_files'
 * min-input-files: 5; remove_orphan_files' older_than: 3 days).
 */
export const maintenanceSchema = z
  .object({
    /** The coordinator of each dataset runs maintenance between rounds, every intervalMinutes. */
    enabled: z.boolean().default(false),
    intervalMinutes: positive.default(60),
    /** A snapshot older than this may be expired. */
    maxSnapshotAgeHours: positive.default(120),
    /** Each branch keeps at least this many of its newest snapshots, whatever their age. */
    minSnapshotsToKeep: positiveInt.default(1),
    /** Compaction writes files of about this size; files under three quarters of it are small. */
    targetFileSizeBytes: positiveInt.default(128 * 1024 * 1024),
    /** A partition is compacted once it holds at least this many small files. */
    minInputFiles: z.preprocess(numeric, z.number().int().min(2)).default(5),
    /**
     * A file under the table's location that no snapshot or metadata file references is deleted
     * once older than this. An uploaded file waits for its round's commit, so the configuration
     * refuses an age under twenty rounds (commit interval plus commit timeout).
     */
    orphanAgeHours: positive.default(72),
  })
  .strict()

// Kafka's legal topic name (a topic name also names a WAL folder, so it is checked here).
/** `namespace.table`, the namespace of one level or more. */
export const qualifiedTable = /^[^.\s]+(\.[^.\s]+)+$/

const kafkaTopicName = /^[A-Za-z0-9._-]{1,249}$/
const kafkaTopicNameRule = 'a Kafka topic name: letters, digits, dot, dash and underscore'

export const datasetSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, dot, dash and underscore'),
    /** The one topic the dataset reads; or `topics`, several (never both). */
    topic: z.string().min(1).optional(),
    /**
     * Several topics into the one table, committed together: every round's one commit holds each
     * topic's progress. The coordinator runs on the worker holding partition 0 of the first topic
     * in name order.
     */
    topics: z.array(z.string().regex(kafkaTopicName, kafkaTopicNameRule)).min(1).optional(),
    /**
     * Every topic whose whole name matches this regular expression (as Kafka Connect's
     * `topics.regex`), but Kafka's internal topics (`__*`), the control topic and the dead-letter
     * topics; looked for again every topicRefreshSeconds, so a new topic is read without a restart.
     */
    topicPattern: z.string().min(1).optional(),
    topicRefreshSeconds: positive.default(30),
    table: z.string().regex(qualifiedTable, 'expected namespace.table'),
    /**
     * Each record to the table one of its fields names (docs/architecture.md, "Several topics and
     * many tables"): `field` (a JMESPath expression, or $kafka.topic, .partition, .key,
     * .timestampType or .headers.<name>), `table` with {value} where the value goes, optionally the
     * only `values` that name a table and a `fallback` table for the rest. The dataset's `table` then
     * holds its progress and no rows.
     */
    route: z
      .object({
        field: z.string().min(1),
        table: z.string().min(1),
        values: z
          .array(z.union([z.string(), z.number(), z.boolean()]))
          .min(1)
          .optional(),
        fallback: z.string().regex(qualifiedTable, 'expected namespace.table').optional(),
        maxOpenTables: positiveInt.default(100),
      })
      .strict()
      .optional(),
    /**
     * `mapped` (the default): each record's JSON value becomes a row by customMapping and schema.
     * `raw`: each record is archived as it came (value and key as bytes, headers, coordinates),
     * in columns Floe fixes (datasets.ts); customMapping and schema are then refused.
     */
    mode: z.enum(['mapped', 'raw']).default('mapped'),
    /**
     * Column -> JMESPath (or `$kafka.*`) and column -> type. Leave customMapping out and the dataset
     * infers its columns from the records: each new field is added to the table, as an optional
     * column, before the first row that has it is written; `schema` then declares the columns (by
     * field name) whose type the first values could not tell (`amount: double`).
     */
    customMapping: z.record(z.string(), z.string().min(1)).optional(),
    schema: z.record(z.string(), z.string().min(1)).optional(),
    /**
     * A dataset that infers its columns: the fields (top-level names, or dotted paths into nested
     * objects) whose strings are ISO-8601 timestamps, stored as timestamptz instead of string.
     * Top-level ones are columns from the start, so partitionSpec may use them (day(event_time)).
     */
    timestampFields: z.array(z.string().min(1)).default([]),
    /**
     * `none` (the default): a table without a configured column, or with it of another type, is
     * refused at start. `addColumns`: the worker adds the missing columns (optional) and widens
     * the types Iceberg lets widen (int to long, float to double, a decimal's precision), in one
     * schema change, before it writes. A dataset that infers its columns does so whatever this says.
     */
    schemaEvolution: z.enum(['none', 'addColumns']).default('none'),
    /** Unpartitioned when absent, except in raw mode: day(timestamp) there. */
    partitionSpec: z.array(z.string()).optional(),
    bloomFilterColumns: z.array(z.string()).default([]),
    dlqTopic: z.string().min(1).optional(),
    /**
     * What a record that cannot be decoded does: `dlq` (to dlqTopic; the default when one is set),
     * `skip` (logged with its coordinates, counted, dropped) or `stop` (the worker stops). A dataset
     * without dlqTopic must choose skip or stop (datasets.ts refuses it otherwise).
     */
    badRecords: z.enum(['dlq', 'skip', 'stop']).optional(),
    /** How epoch numbers in timestamp columns are read. */
    timestampUnit: z.enum(['seconds', 'milliseconds', 'microseconds']).default('milliseconds'),
    /** Extra table properties for a table Floe creates. */
    tableProperties: z.record(z.string(), z.string()).default({}),
    /**
     * This dataset's own storage (same shape as the top-level `storage`, which it replaces for
     * this dataset): its files go through a client of their own, so its outage is its own.
     */
    storage: storageBackendSchema.optional(),
  })
  .strict()

export const configSchema = z
  .object({
    kafka: kafkaSchema,
    catalog: catalogSchema,
    storage: storageSchema,
    ingestion: ingestionSchema,
    datasets: z.array(datasetSchema).min(1, 'configure at least one dataset'),
    // prefault: an absent section is parsed as {}, so its keys' own defaults apply (written once).
    maintenance: maintenanceSchema.prefault({}),
    metrics: z
      .object({ port: z.preprocess(numeric, z.number().int().min(0).max(65535)).default(9464) })
      .strict()
      .default({ port: 9464 }),
    log: z
      .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info') })
      .strict()
      .default({ level: 'info' }),
  })
  .strict()
  .refine(
    (c) =>
      c.maintenance.orphanAgeHours * 3600 >=
      20 * (c.ingestion.commitIntervalSeconds + c.ingestion.commitTimeoutSeconds),
    {
      error:
        'must be at least twenty rounds (20 x (commitIntervalSeconds + commitTimeoutSeconds)): a younger file may be an upload still waiting for its commit',
      path: ['maintenance', 'orphanAgeHours'],
    },
  )
  .refine((c) => c.ingestion.wal.layout === 'shared' || c.datasets.every((d) => d.route === undefined), {
    // a routed rotation's files for each table claim ranges of the rotation's cut: the per-partition
    // layout has no such cut
    error: 'a dataset with a route writes the shared layout: set it to shared (the default)',
    path: ['ingestion', 'wal', 'layout'],
  })

export type FloeConfigInput = z.input<typeof configSchema>
export type RawKafkaConfig = z.output<typeof kafkaSchema>
export type RawConfig = z.output<typeof configSchema>
export type RawDataset = z.output<typeof datasetSchema>
export type StorageConfig = z.output<typeof storageBackendSchema>
export type RawCatalogConfig = z.output<typeof catalogSchema>
