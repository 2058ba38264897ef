/* rampart/replica/replica.h: the few calls a plain MPI program may make to
 * the process-replication layer (librampart_replica.so). A program that
 * never includes this header is replicated all the same; these calls only
 * let it write files once and let a spare re-create a lost replica.
 *
 * Example (once per iteration, after the state is complete):
 *
 *     rampart_replica_protect(u, n * sizeof(double));   // once, at start
 *     for (int it = 0; it < iterations; ++it) {
 *         step(u);
 *         rampart_replica_sync();
 *     }
 *     if (rampart_replica_id() == 0) write_results(u);  // one copy writes
 *
 * A program that calls them links rampart_replica_api, whose definitions
 * serve native runs (id 0, one replica, protect and sync do nothing);
 * under rampart-run --replicas the preloaded librampart_replica.so takes
 * their place.
 */
#ifndef RAMPART_REPLICA_REPLICA_H
#define RAMPART_REPLICA_REPLICA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This process's place among the live replicas of its rank, as far as it
 * knows of failures: 0 for the first live one. In a native run, 0. When
 * the replica that was 0 dies, another becomes 0, so "if id is 0, write"
 * writes once per rank (twice at most while a failure is being learnt). */
int rampart_replica_id(void);

/* How many replicas of each rank the job started with (1 when native). */
int rampart_replica_count(void);

/* Names `bytes` bytes at `data` as part of the program's state, copied to
 * a spare that re-creates a lost replica (rampart-run --spares). Call it on
 * every replica alike, in the same order, before the first
 * rampart_replica_sync(), for everything the next iteration needs, its loop
 * counter included. The memory must keep its address (copy into it rather
 * than swapping pointers); handles and pointers are not state. */
void rampart_replica_protect(void* data, size_t bytes);

/* A point where the protected state is complete and alike on every replica
 * of this rank. A spare that re-creates a lost replica runs the program's
 * set-up again (its receives answered from the survivor's log), receives
 * the state at its first call of this function, and resumes from its
 * return. Collective over the program's MPI_COMM_WORLD: the program must be
 * correct were it an MPI_Barrier, and no message may be sent before it and
 * received after it. Make communicators before the first call. It costs
 * the test of a flag, unless a spare is re-creating a replica. */
void rampart_replica_sync(void);

#ifdef __cplusplus
}
#endif

#endif
