/*
 * scaledown.pml: a Promela model of a kubectl-cassandra scale-down of one rack from
 * 3 nodes to 1, with the checkpoint as the lock (docs/model.md explains it all).
 *
 * Names follow the code: step kinds are internal/checkpoint's Step* constants with '-'
 * written '_' (decommission, verify_left, shrink_statefulset, ...); the checkpoint's
 * fields are cp_seq (Checkpoint.Seq), cp_holder (Holder.Session), cp_released
 * (Holder.ReleasedAt), cp_cur/cp_state (Steps[].State: every step before cp_cur is
 * done, as internal/engine runs them in order), and fresh[r] stands for the
 * resourceVersion run r saw last being the object's current one (checkpoint.Store.rv).
 * The step list is built by build_scale_down(), which mirrors
 * checkpoint.ScaleDownSteps; model/steps_test.go compares the two.
 *
 * Mutations (spin -D...): each must make spin report a counterexample.
 *   MUT_PVC_EARLY    delete-pvcs does not wait for the pod to be gone
 *   MUT_NO_FENCE     actions are not preceded by a proof that this session holds the lock
 *   MUT_NO_ALLUN     decommission checks only its own node, not every node of the DC
 *   MUT_SEQ          Store.Save raises seq before the write, keeps it after a conflict,
 *                    accepts a retry on seq alone (holder not compared); the lease
 *                    renewer only logs a lost write (issue 15's lock defect)
 *   MUT_PAUSE_PLAIN  pause-operator is done only when the Deployment is at 0: a resume
 *                    after the restore was written pauses the operator again
 *   MUT_NO_PAUSE     pause-operator believes the operator paused (it is not)
 *   MUT_NO_REDO      verify-left never sends a restarted (NORMAL again) node back to
 *                    decommission (liveness)
 */

#define NNODES 3
#define TARGET 1
#define NONE 255
#define NRUN 2

#ifndef RUNS
#define RUNS 2		/* plugin runs: scale, and a second engineer's resume */
#endif
#ifndef CRASHES
#define CRASHES 2	/* crashes of either run, in all */
#endif
#ifndef FORCES
#define FORCES 1	/* resume --force-takeover while the holder may live */
#endif
#ifndef DOWNS
#define DOWNS 1		/* a node going DN (and back) */
#endif
#ifndef RECREATES
#define RECREATES 1	/* a pod re-created (eviction): same node, Cassandra restarts */
#endif
#ifndef REFUSALS
#define REFUSALS 1	/* Cassandra refuses a decommission */
#endif
#ifndef BUMPS
#define BUMPS 1		/* someone else writes the cluster resource (status): rv changes */
#endif
#ifndef RENEWS
#define RENEWS 2	/* lease renewals (each is a checkpoint write) */
#endif
/* incarnations per run: every stop (crash, refusal, lost lock) may be followed by a resume */
#define NINC (CRASHES + FORCES + REFUSALS + 2)
#define NSESS (1 + NRUN * NINC)

mtype = { pause_operator, decommission, verify_left, shrink_statefulset, wait_pod_gone,
          delete_pvcs, update_cluster, resume_operator };
mtype = { pending, started };			/* step states; done = before cp_cur */
mtype = { NORMAL, LEAVING, LEFT };		/* Cassandra's view of a node (netstats Mode) */

/* the plan: step kinds and the ordinal of the pod each is about */
#define MAXSTEPS 13
mtype kind[MAXSTEPS];
byte spod[MAXSTEPS];
byte nsteps;

/* the checkpoint annotation on the cluster resource */
bool cp_present;
byte cp_seq;
byte cp_holder;		/* Holder.Session */
bool cp_released;	/* Holder.ReleasedAt set */
byte cp_cur;		/* first step not recorded done */
mtype cp_state;		/* that step's state */
bool planned;		/* scale wrote the checkpoint (a crash before: run scale again) */
bool finished;		/* the checkpoint was cleared at the end (Store.Finish) */
bool fresh[NRUN];	/* run r's last seen resourceVersion is current */

/* the world */
bool pod[NNODES];		/* pod exists */
bool pvc[NNODES];		/* its data PVC exists */
mtype mode[NNODES];		/* NORMAL, LEAVING, LEFT (DECOMMISSIONED, out of the ring) */
bool up[NNODES];		/* U or D in nodetool status */
byte sts = NNODES;		/* the rack StatefulSet's spec.replicas */
byte crn = NNODES;		/* the cluster resource's nodesPerRacks */
byte opr = 1;			/* the operator Deployment's replicas */
byte pauses, restores;		/* history of the operator's replicas: 1 -> 0 -> 1 */

/* sessions: 1 + r + NRUN*k for incarnation k of run r */
bool alive[NSESS];	/* the session's process runs (and renews its lease) */
bool deposed[NSESS];	/* another session took the checkpoint over from it */

/* budgets of the environment's events */
byte crashes = CRASHES;
byte forces = FORCES;
byte downs = DOWNS;
byte recreates = RECREATES;
byte refusals = REFUSALS;
byte bumps = BUMPS;
byte renews = RENEWS;
bool creq[NRUN];	/* a crash of run r is due */

inline add(k, p) {
	kind[nsteps] = k; spod[nsteps] = p; nsteps++
}

/* checkpoint.ScaleDownSteps(nodes, pause): nodes highest ordinal first */
inline build_scale_down() {
#ifndef NOPAUSESTEP
	add(pause_operator, NONE);
#endif
	b = NNODES - 1;
	do
	:: b >= TARGET ->
		add(decommission, b); add(verify_left, b); add(shrink_statefulset, b);
		add(wait_pod_gone, b); add(delete_pvcs, b);
		b--
	:: else -> break
	od;
#ifndef NOPAUSESTEP
	add(update_cluster, NONE);
	add(resume_operator, NONE)
#else
	add(update_cluster, NONE)
#endif
}

/* every node of the DC in the ring is UN */
#define UN(n) (mode[n] == LEFT || (mode[n] == NORMAL && up[n] && pod[n]))
#define ALLUN (UN(0) && UN(1) && UN(2))

/* Done: asked of the world (steps.*.Done) */
#ifdef MUT_PAUSE_PLAIN
#define PAUSE_DONE (opr == 0)
#else
/* pauseOnce: paused now, or the restore after it was written started or done */
#define PAUSE_DONE (opr == 0 || (cp_cur == nsteps - 1 && cp_state == started))
#endif
#ifdef MUT_NO_PAUSE
#undef PAUSE_DONE
#define PAUSE_DONE (1)
#endif
#ifdef MUT_PVC_EARLY
#define PODGONE_DONE(n) (1)
#else
#define PODGONE_DONE(n) (!pod[n])
#endif
#define DONE(i, n) ( \
	(kind[i] == pause_operator && PAUSE_DONE) || \
	(kind[i] == decommission && mode[n] != NORMAL) || \
	(kind[i] == verify_left && mode[n] == LEFT) || \
	(kind[i] == shrink_statefulset && sts <= n) || \
	(kind[i] == wait_pod_gone && PODGONE_DONE(n)) || \
	(kind[i] == delete_pvcs && !pvc[n]) || \
	(kind[i] == update_cluster && crn == TARGET && sts == TARGET) || \
	(kind[i] == resume_operator && opr == 1))

/* Safe: re-checked from the world right before acting */
#ifdef MUT_NO_ALLUN
#define DECOMM_SAFE(n) (pod[n] && mode[n] == NORMAL && up[n])
#else
#define DECOMM_SAFE(n) (pod[n] && mode[n] == NORMAL && up[n] && ALLUN)
#endif
#ifdef MUT_PVC_EARLY
#define PVC_SAFE(n) (mode[n] == LEFT)
#else
#define PVC_SAFE(n) (!pod[n] && mode[n] == LEFT && sts <= n)
#endif
#define SAFE(i, n) ( \
	(kind[i] == pause_operator) || \
	(kind[i] == decommission && DECOMM_SAFE(n)) || \
	(kind[i] == shrink_statefulset && mode[n] == LEFT && sts == n + 1) || \
	(kind[i] == delete_pvcs && PVC_SAFE(n)) || \
	(kind[i] == update_cluster && sts == TARGET) || \
	(kind[i] == resume_operator && crn == TARGET && sts == TARGET))

/* steps that write nothing before they act (engine.Evident) */
#define EVIDENT(i) (kind[i] != pause_operator && kind[i] != decommission && kind[i] != resume_operator)
/* steps whose Do does nothing */
#define NOACTION(i) (kind[i] == verify_left || kind[i] == wait_pod_gone)

/* the proof, right before an action, that this session still holds the lock */
#ifdef MUT_NO_FENCE
#define FENCE (1)
#else
#define FENCE (cp_present && cp_holder == sess && cp_seq == myseq)
#endif

/* on a 409 conflict, Store.write re-reads and retries only if the checkpoint is still ours */
#ifdef MUT_SEQ
#define ACCEPT (cp_present && cp_seq == myseq - 1)
#else
#define ACCEPT (cp_present && cp_seq == myseq && cp_holder == sess)
#endif

/* Store.Finish writes at the seq the run wrote last (no increment) */
#ifdef MUT_SEQ
#define FINISH_ACCEPT (cp_present && cp_seq == myseq)
#else
#define FINISH_ACCEPT ACCEPT
#endif

/* one conditional write of the run's checkpoint (Store.Save) */
inline write_cp() {
	/* a plain write never changes the holder: only a takeover does */
	assert(cp_holder == sess && !deposed[sess]);
	cp_seq = myseq; cp_cur = i; cp_state = mst; cp_released = rel;
	fresh[1 - r] = 0; fresh[r] = 1
}

/* Store.Save: lost = 1 when the checkpoint is no longer ours */
inline save() {
	lost = 0;
#ifdef MUT_SEQ
	myseq++;		/* raised before the write, kept when it fails */
#endif
	do
	:: atomic { fresh[r] ->
#ifndef MUT_SEQ
		myseq++;
#endif
		write_cp() }; break
	:: atomic { !fresh[r] ->	/* 409: re-read */
		if
		:: ACCEPT -> fresh[r] = 1
		:: else -> lost = 1
		fi };
		if
		:: lost -> break
		:: else -> skip
		fi
	od
}

/* an action: what it may do, and the properties that must hold when it does */
inline act(i, n) {
	assert(cp_present && cp_holder == sess && !deposed[sess]);	/* fencing */
	if
	:: kind[i] == pause_operator -> opr = 0; pauses++
	:: kind[i] == resume_operator -> opr = 1; restores++
	:: kind[i] == decommission ->
		assert(ALLUN);	/* every node of the DC UN, now */
		if
		:: refusals > 0 -> refusals--; refused = 1	/* RF check: still NORMAL */
		:: true -> mode[n] = LEAVING
		fi
	:: kind[i] == shrink_statefulset -> sts = n	/* JSON patch: test n+1, replace n */
	:: kind[i] == delete_pvcs ->
		assert(!pod[n] && mode[n] == LEFT);	/* never a PVC of a pod or a ring member */
		pvc[n] = 0
	:: kind[i] == update_cluster -> crn = TARGET; fresh[0] = 0; fresh[1] = 0
	fi
}

proctype Run(byte r) {
	byte sess, k, myseq, i, n, h;
	mtype mst;
	bool ok, lost, rel, refused, forced;

	do
	:: k < NINC && !finished ->
		sess = 1 + r + NRUN * k; k++;
		alive[sess] = 1;
		i = 0; mst = pending; rel = 0; refused = 0; forced = 0;
		{
			if
			:: r == 0 && !planned ->	/* scale: plan, then Store.Create */
				atomic { !cp_present && !finished ->
					planned = 1; cp_present = 1; cp_seq = 1; myseq = 1; cp_holder = sess;
					cp_released = 0; cp_cur = 0; cp_state = pending;
					fresh[1 - r] = 0; fresh[r] = 1 }
			:: else ->		/* resume: load, judge the lock, take over (Lock, TakeOver, Save) */
				/* one step: a takeover written at a stale resourceVersion fails and the
				 * run loads again, so nothing is lost by not splitting it */
				atomic {
					if
					:: finished -> goto stop	/* nothing to resume */
					:: cp_present && (cp_released || !alive[cp_holder]) -> skip	/* released, or lease expired */
					:: cp_present && forces > 0 -> forces--	/* --force-takeover, the holder may live */
					fi;
					deposed[cp_holder] = 1; cp_holder = sess;
					cp_seq++; myseq = cp_seq; cp_released = 0;
					fresh[1 - r] = 0; fresh[r] = 1 }
			fi;

			/* engine.Run: every step from the first, the world asked whether it is done */
			do
			:: i == nsteps -> break
			:: else ->
				n = spod[i];
				if
				:: atomic { !forced && DONE(i, n) -> i++; mst = pending }	/* markDone: in memory */
				:: else ->
					forced = 0;
					if
					:: !EVIDENT(i) ->	/* "started" is written before the action */
						mst = started; save();
						if
						:: lost -> goto stop
						:: else -> skip
						fi
					:: else -> skip
					fi;
					if
					:: NOACTION(i) -> skip
					:: else ->
						/* Safe, the lock, the action: one step; wait while not safe */
						do
						:: atomic { SAFE(i, n) && FENCE -> act(i, n) }; break
						:: atomic { !FENCE -> lost = 1 }; goto stop
						:: atomic { renews > 0 -> renews-- }; save();
#ifndef MUT_SEQ
							if
							:: lost -> goto stop
							:: else -> skip
							fi
#endif
						od;
						if
						:: refused ->	/* exit 3: recorded not started, the lock released */
							mst = pending; rel = 1; save(); goto stop
						:: else -> skip
						fi
					fi;
					/* wait until the world shows the effect */
					do
					:: atomic { DONE(i, n) -> i++; mst = pending }; break
					:: atomic { kind[i] == decommission && mode[n] == NORMAL ->
						forced = 1 }; break	/* still NORMAL: decommission again */
#ifndef MUT_NO_REDO
					:: atomic { kind[i] == verify_left && mode[n] == NORMAL ->
						i--; forced = 1 }; break	/* restarted: back to decommission */
#endif
					:: atomic { kind[i] == wait_pod_gone && pod[n] && sts > n ->
						rel = 1 }; save(); goto stop	/* grown again: fatal */
					:: atomic { renews > 0 -> renews-- }; save();
#ifndef MUT_SEQ
						if
						:: lost -> goto stop
						:: else -> skip
						fi
#endif
					od
				fi
			od;

			/* Store.Finish: clear the checkpoint, at the seq this run wrote last */
			do
			:: atomic { fresh[r] ->
				assert(cp_holder == sess && !deposed[sess]);
				assert(opr == 1 && crn == TARGET && sts == TARGET);
				assert(!pvc[1] && !pvc[2] && mode[1] == LEFT && mode[2] == LEFT);
				cp_present = 0; finished = 1; fresh[0] = 0; fresh[1] = 0 }; break
			:: atomic { !fresh[r] ->
				if
				:: FINISH_ACCEPT -> fresh[r] = 1
				:: else -> lost = 1
				fi };
				if
				:: lost -> goto stop
				:: else -> skip
				fi
			od;
stop:			skip
		} unless { atomic { creq[r] -> creq[r] = 0 } };
		atomic { alive[sess] = 0; i = 0; myseq = 0; n = 0; h = 0; mst = pending;
			ok = 0; lost = 0; rel = 0; refused = 0; forced = 0 }
	:: else -> break
	od
}

/* crashes at any point of either run */
active proctype Crasher() {
end:	do
	:: atomic { crashes > 0 -> crashes--; creq[0] = 1 }
	:: atomic { crashes > 0 -> crashes--; creq[1] = 1 }
	od
}

/* CassKop: regrows the StatefulSet to the cluster resource's count when it runs */
active proctype Operator() {
end:	do
	:: atomic { opr > 0 && sts < crn -> sts++ }
	od
}

/* the StatefulSet controller: removes pods beyond replicas, highest first; creates missing ones */
active proctype StatefulSetController() {
	byte n;
end:	do
	:: atomic { pod[2] && sts <= 2 -> pod[2] = 0 }
	:: atomic { pod[1] && !pod[2] && sts <= 1 -> pod[1] = 0 }
	:: atomic { (!pod[1] && sts > 1) || (!pod[2] && sts > 2) ->
		if
		:: !pod[1] && sts > 1 -> n = 1
		:: else -> n = 2
		fi;
		pod[n] = 1;
		if
		:: !pvc[n] -> pvc[n] = 1; mode[n] = NORMAL; up[n] = 1	/* a new, empty node */
		:: else -> skip		/* same node: a decommissioned one stays out */
		fi;
		n = 0 }
	od
}

/* Cassandra: a LEAVING node finishes streaming and leaves the ring */
active proctype Cassandra() {
end:	do
	:: atomic { mode[1] == LEAVING -> mode[1] = LEFT }
	:: atomic { mode[2] == LEAVING -> mode[2] = LEFT }
	od
}

/* the environment: a node DN and back, a pod re-created, a write to the cluster resource */
active proctype Environment() {
end:	do
	:: atomic { downs > 0 && mode[0] == NORMAL && up[0] -> downs--; up[0] = 0 }
	:: atomic { downs > 0 && mode[1] == NORMAL && up[1] && pod[1] -> downs--; up[1] = 0 }
	:: atomic { downs > 0 && mode[2] == NORMAL && up[2] && pod[2] -> downs--; up[2] = 0 }
	:: atomic { !up[0] -> up[0] = 1 }
	:: atomic { !up[1] -> up[1] = 1 }
	:: atomic { !up[2] -> up[2] = 1 }
	/* a pod re-created (same node identity): Cassandra restarts, which ends a decommission */
	:: atomic { recreates > 0 && mode[1] == LEAVING -> recreates--; mode[1] = NORMAL }
	:: atomic { recreates > 0 && mode[2] == LEAVING -> recreates--; mode[2] = NORMAL }
	:: atomic { bumps > 0 -> bumps--; fresh[0] = 0; fresh[1] = 0 }
	od
}

/* invariants, checked in every reachable state (a branch fires only when one breaks) */
#define TWO_LEAVING (mode[1] == LEAVING && mode[2] == LEAVING)
#define OPERATOR_LIVE_WHILE_DIFFERENT (cp_present && opr > 0 && sts != crn)
#define NOT_RESTORED (finished && opr == 0)
active proctype Monitor() {
end:	do
	:: atomic { TWO_LEAVING -> assert(!TWO_LEAVING) }			/* never two LEAVING */
	:: atomic { OPERATOR_LIVE_WHILE_DIFFERENT -> assert(!OPERATOR_LIVE_WHILE_DIFFERENT) }
	:: atomic { NOT_RESTORED -> assert(!NOT_RESTORED) }			/* restored at the end */
	:: atomic { pauses > 1 || restores > 1 -> assert(pauses <= 1 && restores <= 1) }	/* 1 -> 0 -> 1 */
	od
}

init {
	byte j, b;
	atomic {
		j = 0;
		do
		:: j < NNODES -> pod[j] = 1; pvc[j] = 1; mode[j] = NORMAL; up[j] = 1; j++
		:: else -> break
		od;
		build_scale_down();
#ifdef PRINT_STEPS
		j = 0;
		do
		:: j < nsteps ->
			if
			:: spod[j] == NONE -> printf("MODEL-STEP %e -\n", kind[j])
			:: else -> printf("MODEL-STEP %e %d\n", kind[j], spod[j])
			fi;
			j++
		:: else -> break
		od
#else
		run Run(0);
#if RUNS > 1
		run Run(1)
#endif
#endif
	}
}

ltl finishes { <> finished }
