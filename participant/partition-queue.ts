// How one Kafka partition's work is kept in order: the one mechanism, and why it suffices.
//
// Everything that changes a partition's WAL is a step on its PartitionQueue: the record loop's
// append, rotation and row-group flush, the machine's sync, flush (its rotation), acknowledge and
// revoke, a change of the table's schema or spec, and the sweep of a partition this worker no
// longer owns. A step starts once the one before it has settled, so no step sees another half
// done: an append never lands between a sync's close of the old log and its opening of the new
// one, and a revoke that aborted a running sync lets go of the log that sync opened.
//
// One queue per partition number for the TopicParticipant's life (PartitionQueues), not one per
// slot: a partition revoked and assigned again gets a new slot whose first sync waits for the old
// slot's letting go, and the sweep never deletes files while the partition's steps use them.
//
// Nothing else orders these steps. The machine's chart decides which actor runs when (a flush
// only of a synced chain, a resync only between rounds) for the protocol's sake, not to keep WAL
// work apart. PartitionLog orders the calls made to it, its contract to any caller; the one caller
// outside the steps is the uploads' bookkeeping (markUploaded), left out so that a round's uploads
// never wait behind appends, and the log keeps it apart from its deletes.
export class PartitionQueue {
  #tail: Promise<unknown> = Promise.resolve()

  /** Runs `step` once every step queued before it has settled; a failed step does not stop the next. */
  run<T>(step: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(step, step)
    this.#tail = result.catch(() => {})
    return result
  }
}

/** The queue of each partition number, made on first use and kept. */
export class PartitionQueues {
  readonly #queues = new Map<number, PartitionQueue>()

  of(partition: number): PartitionQueue {
    let queue = this.#queues.get(partition)
    if (!queue) {
      queue = new PartitionQueue()
      this.#queues.set(partition, queue)
    }
    return queue
  }
}
