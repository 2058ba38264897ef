// The calls of rampart/replica/replica.h for native runs (no replication):
// a program that uses them links this library; under rampart-run
// --replicas the preloaded librampart_replica.so comes first and answers.

#include <rampart/replica/replica.h>

extern "C" {
int rampart_replica_id(void) { return 0; }
int rampart_replica_count(void) { return 1; }
void rampart_replica_protect(void*, size_t) {}
void rampart_replica_sync(void) {}
}
