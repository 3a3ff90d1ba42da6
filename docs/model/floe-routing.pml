/*
 * Routing one Kafka partition into two tables (docs/architecture.md, "Several topics and many
 * tables"): the design before the code. Each table keeps its own marker M[t] (the table holds
 * every record of the partition below M[t] that the route sends to it); the ledger L says every
 * table holds every such record below L. A worker reads from L and claims, per table, the range
 * from max(M[t], L) as it read them; the coordinator commits each table on its own (the
 * compare-and-set of one table) and moves the ledger afterwards, only when every table of the
 * status committed. Records: offsets 0..NR-1, record i goes to table i % 2 (the route is a
 * function of the record).
 *
 * Switches (spin -D...):
 *   NR=n              records (offsets 0..NR-1)
 *   RESTARTS=n        worker restarts (a crash, or a resync after a rejection): it positions again
 *                     from the catalog and loses what it had not reported
 *   STATUSES=n        statuses the run may send, over all the worker's lives
 *   LEDGER_IN_REQUEST broken: the ledger moves inside the multi-table request, the tables applied
 *                     one by one around it (as the REST server applies a transaction), so a table
 *                     can fail after the ledger moved
 *   LEDGER_ONLY       broken: a table's effective marker is the ledger alone (no marker per table,
 *                     no skip on replay)
 *
 * Properties: no record is in its table twice (held[i] <= 1, asserted at every commit), and the
 * ledger is never ahead of the tables (every record below L is in its table, asserted by a
 * monitor in every state).
 */

#ifndef NR
#define NR 3
#endif
#ifndef RESTARTS
#define RESTARTS 2
#endif
#ifndef STATUSES
#define STATUSES 3
#endif

#define NT 2
#define route(i) ((i) % NT)
#define max(a, b) ((a) > (b) -> (a) : (b))

/* ---- the catalog ---- */
byte M[NT];                  /* each table's marker: floe.offsets.<group> of that table */
byte L;                      /* the ledger's marker */
byte held[NR];               /* how many times each record is in its table */

/* ---- the control topic: a WRITE-STATUS per cut ---- */
/* a, e: the positions the worker read since its last cut (or its positioning); s0, s1: each
 * table's claim [s_t, e) (no claim when s_t >= e or no record of [s_t, e) goes to t) */
chan status = [STATUSES] of { byte, byte, byte, byte };

byte sent;
byte restarts;

/* Whether some record of [s, e) goes to table t: a claim without rows is not sent. Any NT
 * consecutive records hold one of each table's. */
#define rowsFor(t, s, e) ((s) < (e) && ((e) - (s) >= NT || route(s) == (t)))

/* The effective marker of table t, with the ledger as read: the correct design's, or the broken
 * one's. */
#ifdef LEDGER_ONLY
#define effective(t, ledger) (ledger)
#else
#define effective(t, ledger) (max(M[t], ledger))
#endif

/* The table gains the rows of the claim [s, e) and its marker moves to e. */
inline apply(t, s, e) {
  j = s;
  do
  :: j < e -> if :: route(j) == t -> held[j]++; assert(held[j] <= 1) :: else -> skip fi; j++
  :: else -> break
  od;
  M[t] = e
}

/* One table's commit of a claim: the requirement and the contiguity check read the table as it is
 * (the ledger as this coordinator read it, maybe older). It lands, or is rejected (the worker then
 * resyncs), or the coordinator dies first, or it lands and the reply is lost; `ok` stays true only
 * when it landed and the coordinator knows it. */
inline commitTable(t, s, e, ledger, ok) {
  if
  :: ok && rowsFor(t, s, e) ->
     if
     :: atomic { s == effective(t, ledger) -> apply(t, s, e) }
     :: atomic { s == effective(t, ledger) -> apply(t, s, e); ok = false }
     :: atomic { s != effective(t, ledger) -> ok = false }
     :: ok = false
     fi
  :: else -> skip
  fi
}

/* The ledger's own commit, a compare-and-set: it moves to e when the status read from at or
 * before it, and only forward. */
inline moveLedger(a, e) {
  atomic { if :: a <= L && L < e -> L = e :: else -> skip fi }
}

proctype Coordinator() {
  byte a, e, s0, s1, j, ledger;
  bool ok;
end:
  do
  :: status ? a, e, s0, s1 ->
     ok = true;
     ledger = L;
#ifdef LEDGER_IN_REQUEST
     /* one request: the tables applied one by one, the ledger among them */
     commitTable(0, s0, e, ledger, ok);
     if :: ok -> moveLedger(a, e) :: else -> skip fi;
     commitTable(1, s1, e, ledger, ok);
#else
     commitTable(0, s0, e, ledger, ok);
     commitTable(1, s1, e, ledger, ok);
     /* after every table of the status confirmed its commit, in a commit of its own */
     if :: ok -> moveLedger(a, e) :: else -> skip fi;
#endif
  od
}

proctype Worker() {
  byte pos, a, E0, E1;
position:
  /* positioning: from the ledger, then each table's effective marker, read one after the other */
  pos = L;
  a = pos;
  E0 = effective(0, L);
  E1 = effective(1, L);
  do
  :: pos < NR -> pos++                      /* reads one record into its table's open segment */
  :: pos > a && sent < STATUSES ->
     /* a cut: the open segments become a rotation and its WRITE-STATUS; each table's claim starts
      * where the table stopped vouching for its records */
     atomic { status ! a, pos, max(a, E0), max(a, E1); sent++; a = pos }
  :: restarts < RESTARTS -> restarts++; goto position
  :: else -> break
  od
}

/* M2: every record below the ledger is in its table. Written out for four records: */
#if NR > 4
#error "the ledger monitor covers NR <= 4"
#endif
#define vouched(i) (NR <= (i) || L <= (i) || held[i] == 1)
#define LEDGER_TRUE (vouched(0) && vouched(1) && vouched(2) && vouched(3))

active proctype LedgerNeverAhead() {
end:
  atomic { !LEDGER_TRUE -> assert(LEDGER_TRUE) }
}

/* Two coordinators, so that one reads the ledger while the other moves it. */
init {
  atomic {
    run Worker();
    run Coordinator();
    run Coordinator()
  }
}
