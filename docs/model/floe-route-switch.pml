/*
 * A route changed while workers of the old route still run (docs/architecture.md, "A route
 * changed while the fleet runs"): the design before the code. One Kafka partition, records
 * 0..NR-1, two tables. The old route (generation 0) sends record i to table i % 2, the new one
 * (generation 1) to table (i + 1) % 2: each table is named by both routes, for other records.
 *
 * The old generation runs as floe-routing.pml's does (each table's marker M0[t], the ledger L, a
 * worker reading from L and claiming per table from max(M0[t], L)), plus one rule: a table commit
 * reads the ledger after it loaded the table and gives up when the ledger's generation is no
 * longer its own (the gate). A switcher (it may die at any step and is started again, as
 * the next coordinator of the new route would)
 * (1) marks the ledger "switching to generation 1", which stops every old ledger commit;
 * (2) lists the tables that exist and fences each: a commit of no data that moves the table's
 *     main, so an old table commit that loaded the table before it loses its compare-and-set,
 *     and whose reload then meets the gate; the fence reads the table's old marker, final now;
 * (3) commits the ledger "switched", with the old route's markers as floors F[t].
 * The new generation's workers read only once the ledger is switched: from L, skipping record i
 * when the old route's table holds it (F[i % 2] > i), claiming per table from max(M1[t], L),
 * where M1 is the table's marker of generation 1 (absent before: the ledger vouches).
 *
 * Switches (spin -D...):
 *   NR=n           records
 *   RESTARTS=n     restarts of the new-route worker (it positions again from the ledger)
 *   STATUSES=n     statuses the new-route worker may send
 *   OLD_STATUSES=n statuses the old-route worker may send (it reads from 0)
 *   REDOS=n        times the switch is started again after it died (at any step)
 *   NO_GATE        broken: an old table commit does not read the ledger after loading the table
 *   NO_FENCE       broken: the switcher reads the old markers without fencing the tables
 *   NO_FLOORS      broken: the new route's worker does not skip what the old route's tables hold
 *   SHARED_MARKER  broken: the new route claims from the old marker (no marker per generation)
 *
 * Properties: no record is in a table twice, over both tables (held[i] <= 1, asserted at every
 * commit), and the ledger is never ahead: every record below L is in a table (a monitor).
 */

#ifndef NR
#define NR 3
#endif
#ifndef RESTARTS
#define RESTARTS 1
#endif
#ifndef STATUSES
#define STATUSES 2
#endif
#ifndef OLD_STATUSES
#define OLD_STATUSES 1
#endif
#ifndef REDOS
#define REDOS 1
#endif

#define NT 2
#define route0(i) ((i) % NT)
#define route1(i) (((i) + 1) % NT)
#define max(a, b) ((a) > (b) -> (a) : (b))

/* ---- the catalog ---- */
byte M0[NT];      /* each table's marker of generation 0 */
byte M1[NT];      /* each table's marker of generation 1 */
byte V[NT];       /* each table's main: moves with every commit, a fence's too */
bool C[NT];       /* the table exists (created on first use by a worker) */
byte held[NR];    /* how many times each record is in a table, over both tables */

byte L;           /* the ledger's marker */
byte LV;          /* the ledger's main */
byte gen;         /* the ledger's route generation */
bool switching;   /* the ledger says: switching to gen, not yet switched */
byte F[NT];       /* the switched ledger's floors: what each table holds of the old route */

chan status0 = [STATUSES] of { byte, byte, byte, byte };
chan status1 = [STATUSES] of { byte, byte, byte, byte };

/* Whether the old route's table holds record i: the new route's worker skips it. */
#ifdef NO_FLOORS
#define floorSkips(i) false
#else
#define floorSkips(i) (F[route0(i)] > (i))
#endif

/* The marker the new route judges its claims by. */
#ifdef SHARED_MARKER
#define M1of(t) M0[t]
#else
#define M1of(t) M1[t]
#endif

inline apply0(t, s, e) {
  j = s;
  do
  :: j < e -> if :: route0(j) == t -> held[j]++; assert(held[j] <= 1) :: else -> skip fi; j++
  :: else -> break
  od;
  M0[t] = e
}

inline apply1(t, s, e) {
  j = s;
  do
  :: j < e ->
     if :: route1(j) == t && !floorSkips(j) -> held[j]++; assert(held[j] <= 1) :: else -> skip fi; j++
  :: else -> break
  od;
#ifdef SHARED_MARKER
  M0[t] = e
#else
  M1[t] = e
#endif
}

/* Some record of [s, e) goes to table t under the old route. */
#define rows0(t, s, e) ((s) < (e) && ((e) - (s) >= NT || route0(s) == (t)))

/* ---- the old generation: floe-routing.pml's coordinator, with the gate ---- */
proctype OldCoordinator() {
  byte a, e, s0, s1, j, t, s, ledger, lv, m, v;
  bool ok;
end:
  do
  :: status0 ? a, e, s0, s1 ->
     ok = true;
     ledger = L;
     t = 0;
     do
     :: t < NT ->
        s = (t == 0 -> s0 : s1);
        if
        :: ok && rows0(t, s, e) ->
           /* load the table (its main and marker) */
           atomic { ok = C[t]; m = M0[t]; v = V[t] };
#ifndef NO_GATE
           /* the gate: the ledger, read after the table, still of this generation */
           atomic { ok = ok && gen == 0 && !switching };
#endif
           if
           :: ok ->
              if
              :: atomic { V[t] == v && s == max(m, ledger) -> apply0(t, s, e); V[t]++ }
              :: atomic { V[t] == v && s == max(m, ledger) -> apply0(t, s, e); V[t]++; ok = false }
              :: atomic { !(V[t] == v && s == max(m, ledger)) -> ok = false }
              :: ok = false
              fi
           :: else -> skip
           fi
        :: else -> skip
        fi;
        t++
     :: else -> break
     od;
     /* the ledger's advance, a compare-and-set that asserts its generation */
     if
     :: ok ->
        atomic { lv = LV; ok = gen == 0 && !switching };
        atomic { if :: ok && LV == lv && a <= L && L < e -> L = e; LV++ :: else -> skip fi }
     :: else -> skip
     fi
  od
}

proctype OldWorker() {
  byte pos, a, E0, E1, sent;
  pos = 0;
  a = pos;
  E0 = max(M0[0], L);
  E1 = max(M0[1], L);
  do
  :: pos < NR -> atomic { C[route0(pos)] = true; pos++ }
  :: pos > a && sent < OLD_STATUSES ->
     atomic { status0 ! a, pos, max(a, E0), max(a, E1); sent++; a = pos }
  :: else -> break
  od
}

/* ---- the switch ---- */
proctype Switcher() {
  byte t, v, f0, f1, lv, lives;
  bool listed;
again:
  f0 = 0;
  f1 = 0;
  /* (1) mark the ledger: from now on no old ledger commit lands, no old table commit passes the gate */
  atomic { if :: gen == 0 -> gen = 1; switching = true; LV++ :: else -> skip fi };
  /* (2) list the tables and fence each one that exists */
  t = 0;
  do
  :: t < NT ->
     listed = C[t];
     if
     :: listed ->
#ifdef NO_FENCE
        atomic { if :: t == 0 -> f0 = M0[t] :: else -> f1 = M0[t] fi }
#else
        do
        :: atomic { v = V[t] };
           if
           :: atomic { V[t] == v -> V[t]++; if :: t == 0 -> f0 = M0[t] :: else -> f1 = M0[t] fi }; break
           :: atomic { V[t] != v }
           fi
        :: goto died
        od
#endif
     :: else -> skip
     fi;
     t++
  :: t >= NT -> break
  :: goto died
  od;
  /* (3) the switched ledger, with the old markers as floors, a compare-and-set */
  atomic { lv = LV };
  atomic { if :: switching && LV == lv -> F[0] = f0; F[1] = f1; switching = false; LV++ :: else -> skip fi };
died:
  /* a switcher that died is started again (a new coordinator of the new route): it redoes it all */
  if
  :: lives < REDOS -> lives++; goto again
  :: else -> skip
  fi
}

/* ---- the new generation ---- */
proctype NewCoordinator() {
  byte a, e, s0, s1, j, t, s, ledger, lv, m, v;
  bool ok;
end:
  do
  :: status1 ? a, e, s0, s1 ->
     ok = true;
     ledger = L;
     t = 0;
     do
     :: t < NT ->
        s = (t == 0 -> s0 : s1);
        if
        :: ok && s < e ->
           atomic { m = M1of(t); v = V[t] };
           if
           :: atomic { V[t] == v && s == max(m, ledger) -> apply1(t, s, e); V[t]++ }
           :: atomic { V[t] == v && s == max(m, ledger) -> apply1(t, s, e); V[t]++; ok = false }
           :: atomic { !(V[t] == v && s == max(m, ledger)) -> ok = false }
           :: ok = false
           fi
        :: else -> skip
        fi;
        t++
     :: else -> break
     od;
     if
     :: ok -> atomic { if :: a <= L && L < e && gen == 1 && !switching -> L = e; LV++ :: else -> skip fi }
     :: else -> skip
     fi
  od
}

proctype NewWorker() {
  byte pos, a, E0, E1, sent, restarts;
end_position:
  /* it reads only once the ledger is switched to its generation */
  atomic { gen == 1 && !switching -> pos = L };
  a = pos;
  E0 = max(M1of(0), L);
  E1 = max(M1of(1), L);
  do
  :: pos < NR -> pos++
  :: pos > a && sent < STATUSES ->
     atomic { status1 ! a, pos, max(a, E0), max(a, E1); sent++; a = pos }
  :: restarts < RESTARTS -> restarts++; goto end_position
  :: else -> break
  od
}

/* Every record below the ledger is in a table. Written out for four records: */
#if NR > 4
#error "the ledger monitor covers NR <= 4"
#endif
#define vouched(i) (NR <= (i) || L <= (i) || held[i] == 1)
#define LEDGER_TRUE (vouched(0) && vouched(1) && vouched(2) && vouched(3))

active proctype LedgerNeverAhead() {
end:
  atomic { !LEDGER_TRUE -> assert(LEDGER_TRUE) }
}

init {
  atomic {
    run OldWorker();
    run OldCoordinator();
    run Switcher();
    run NewWorker();
    run NewCoordinator()
  }
}
