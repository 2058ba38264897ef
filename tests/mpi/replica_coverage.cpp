// A plain MPI program that uses the calls real programs (mpi4py among
// them) need beyond the classic ones: nonblocking collectives of every
// kind, attributes with copy and delete callbacks, matched probes,
// Isendrecv, buffered and persistent synchronous sends, communicators made
// from groups, split by node or from a Cartesian grid, packing, error
// handlers of the program's own, and Fortran handles. Every result is folded into a checksum, the same in a
// native run and in a replicated one.
// usage: replica_coverage [rounds [stdin]]  (stdin: rank 0 reads its standard input up to a line "end")

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

std::uint64_t sum = 1469598103934665603ull;

void fold(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) sum = (sum ^ p[i]) * 1099511628211ull;
}
template <class T>
void fold(const std::vector<T>& v) {
    fold(v.data(), v.size() * sizeof(T));
}
void fold(long x) { fold(&x, sizeof x); }

void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "replica_coverage: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

void nonblocking_collectives(MPI_Comm comm, int round) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const auto n = static_cast<std::size_t>(size);
    std::vector<int> mine(2, rank * 10 + round), all(2 * n), back(2 * n), each(2 * n), counts(n, 2), displs(n);
    for (std::size_t i = 0; i < n; ++i) displs[i] = static_cast<int>(2 * i), each[2 * i] = each[2 * i + 1] = rank + int(i);
    int scan = 0, exscan = 0, reduced[2] = {0, 0}, block[2] = {0, 0}, scattered[2] = {0, 0};
    std::vector<MPI_Request> q(11);
    MPI_Igather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, size - 1, comm, &q[0]);
    MPI_Iallgather(mine.data(), 2, MPI_INT, back.data(), 2, MPI_INT, comm, &q[1]);
    std::vector<int> swapped(2 * n);
    MPI_Ialltoall(each.data(), 2, MPI_INT, swapped.data(), 2, MPI_INT, comm, &q[2]);
    MPI_Ireduce(mine.data(), reduced, 2, MPI_INT, MPI_SUM, 0, comm, &q[3]);
    MPI_Iscan(&rank, &scan, 1, MPI_INT, MPI_SUM, comm, &q[4]);
    MPI_Iexscan(&rank, &exscan, 1, MPI_INT, MPI_SUM, comm, &q[5]);
    MPI_Ireduce_scatter_block(each.data(), block, 2, MPI_INT, MPI_MAX, comm, &q[6]);
    std::vector<int> gathered(2 * n), to_scatter(2 * n, 7 + round);
    MPI_Iallgatherv(mine.data(), 2, MPI_INT, gathered.data(), counts.data(), displs.data(), MPI_INT, comm, &q[7]);
    MPI_Iscatter(to_scatter.data(), 2, MPI_INT, scattered, 2, MPI_INT, 0, comm, &q[8]);
    std::vector<int> rs(2 * n);
    MPI_Ireduce_scatter(each.data(), rs.data(), counts.data(), MPI_INT, MPI_SUM, comm, &q[9]);
    std::vector<int> gv(2 * n);
    MPI_Igatherv(mine.data(), 2, MPI_INT, gv.data(), counts.data(), displs.data(), MPI_INT, 0, comm, &q[10]);
    int done = 0;
    while (!done) MPI_Testall(static_cast<int>(q.size()), q.data(), &done, MPI_STATUSES_IGNORE);
    if (rank == size - 1) fold(all);
    if (rank == 0) fold(reduced, sizeof reduced), fold(gv);
    fold(back), fold(swapped), fold(gathered), fold(rs);
    fold(scan), fold(rank > 0 ? exscan : 0), fold(block, sizeof block), fold(scattered, sizeof scattered);
}

int copies = 0, deletions = 0;
int copy_attribute(MPI_Comm, int, void*, void* in, void* out, int* flag) {
    ++copies;
    *static_cast<void**>(out) = static_cast<char*>(in) + 1;
    *flag = 1;
    return MPI_SUCCESS;
}
int delete_attribute(MPI_Comm, int, void*, void*) {
    ++deletions;
    return MPI_SUCCESS;
}

void attributes(int round) {
    int key = MPI_KEYVAL_INVALID, flag = 0;
    MPI_Comm_create_keyval(copy_attribute, delete_attribute, &key, nullptr);
    static char base[8];
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, base + round % 4);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    void* value = nullptr;
    MPI_Comm_get_attr(dup, key, &value, &flag);
    check(flag && value == base + round % 4 + 1, "an attribute copied by the key's callback");
    MPI_Comm_free(&dup);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    MPI_Comm_free_keyval(&key);
    int* tag_ub = nullptr;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    fold(copies), fold(deletions), fold(flag && *tag_ub >= 32767);
}

void point_to_point(int rank, int size, int round) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    std::vector<double> out(16 + round, rank + 0.5), in(out.size());
    MPI_Request r;
    MPI_Isendrecv(out.data(), int(out.size()), MPI_DOUBLE, right, 4, in.data(), int(in.size()), MPI_DOUBLE, left, 4,
                  MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    fold(in);
    MPI_Isendrecv_replace(out.data(), int(out.size()), MPI_DOUBLE, right, 5, left, 5, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    fold(out);
    // Matched probes: the size is learnt first, and no other receive can take the message.
    long value = rank * 100 + round;
    MPI_Bsend(&value, 1, MPI_LONG, right, 6, MPI_COMM_WORLD);
    MPI_Message message;
    MPI_Status st;
    MPI_Mprobe(left, 6, MPI_COMM_WORLD, &message, &st);
    int count = 0;
    MPI_Get_count(&st, MPI_LONG, &count);
    long got = 0;
    MPI_Mrecv(&got, count, MPI_LONG, &message, MPI_STATUS_IGNORE);
    check(message == MPI_MESSAGE_NULL, "MPI_Mrecv sets the message to MPI_MESSAGE_NULL");
    fold(got + count);
    MPI_Request b;
    MPI_Ibsend(&value, 1, MPI_LONG, right, 7, MPI_COMM_WORLD, &b);
    int flag = 0;
    while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &message, &st);
    MPI_Imrecv(&got, 1, MPI_LONG, &message, &r);
    MPI_Wait(&r, &st);
    MPI_Wait(&b, MPI_STATUS_IGNORE);
    fold(got + st.MPI_SOURCE);
    // Persistent synchronous and buffered sends.
    MPI_Request p[3];
    long a = value, c = 0;
    MPI_Ssend_init(&a, 1, MPI_LONG, right, 8, MPI_COMM_WORLD, &p[0]);
    MPI_Bsend_init(&a, 1, MPI_LONG, right, 9, MPI_COMM_WORLD, &p[1]);
    MPI_Recv_init(&c, 1, MPI_LONG, left, MPI_ANY_TAG, MPI_COMM_WORLD, &p[2]);
    for (int k = 0; k < 2; ++k) {
        MPI_Startall(3, p);
        MPI_Waitall(3, p, MPI_STATUSES_IGNORE);
        fold(c);
        MPI_Start(&p[2]);
        MPI_Wait(&p[2], MPI_STATUS_IGNORE);
        fold(c);
    }
    for (MPI_Request& x : p) MPI_Request_free(&x);
    // A request's Fortran handle names the same request.
    MPI_Irecv(&got, 1, MPI_LONG, left, 10, MPI_COMM_WORLD, &r);
    MPI_Request back = MPI_Request_f2c(MPI_Request_c2f(r));
    MPI_Send(&value, 1, MPI_LONG, right, 10, MPI_COMM_WORLD);
    MPI_Wait(&back, MPI_STATUS_IGNORE);
    fold(got);
}

// Rank 0 reads its standard input up to a line "end" (Open MPI's mpiexec
// does not pass on the end of its input); every rank folds it.
void standard_input(int rank) {
    std::vector<char> text;
    char line[256];
    while (rank == 0 && std::fgets(line, sizeof line, stdin) && std::strcmp(line, "end\n") != 0)
        text.insert(text.end(), line, line + std::strlen(line));
    long bytes = static_cast<long>(text.size());
    MPI_Bcast(&bytes, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    text.resize(static_cast<std::size_t>(bytes));
    MPI_Bcast(text.data(), static_cast<int>(bytes), MPI_CHAR, 0, MPI_COMM_WORLD);
    fold(text), fold(bytes);
}

int handled = 0;
void on_error(MPI_Comm*, int* code, ...) { handled += *code == MPI_ERR_OTHER; }

void communicators(int rank, int size, int round) {
    MPI_Comm node, idup, with_info, from_group, by_tag;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &node);
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Request r;
    MPI_Comm_idup(node, &idup, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "rampart_hint", "yes");
    MPI_Comm_dup_with_info(idup, info, &with_info);
    MPI_Info_free(&info);
    MPI_Comm_get_info(with_info, &info);
    int flag = 0, length = 0;
    MPI_Info_get_valuelen(info, "rampart_hint", &length, &flag);
    MPI_Info_free(&info);
    fold(node_size), fold(flag * length);
    // The even ranks make a communicator without the odd ones taking part.
    MPI_Group world, evens;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int range[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_incl(world, 1, range, &evens);
    if (rank % 2 == 0) {
        MPI_Comm_create_group(MPI_COMM_WORLD, evens, 11 + round, &by_tag);
        MPI_Comm_create_from_group(evens, "rampart.coverage", MPI_INFO_NULL, MPI_ERRORS_RETURN, &from_group);
        int total = 0, one = 1;
        MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, by_tag);
        MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, from_group);
        fold(total);
        MPI_Comm_free(&by_tag);
        MPI_Comm_free(&from_group);
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&world);
    // A row of a Cartesian grid, and packing with a communicator of the program's.
    MPI_Comm cart, row;
    int dims[2] = {0, 0}, periods[2] = {0, 1}, keep[2] = {0, 1}, row_rank = 0, row_size = 0, bytes = 0, at = 0;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(with_info, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, keep, &row);
    MPI_Comm_rank(row, &row_rank);
    MPI_Comm_size(row, &row_size);
    double two[2] = {double(rank), double(round)}, unpacked[2] = {0, 0};
    MPI_Pack_size(2, MPI_DOUBLE, row, &bytes);
    std::vector<char> packed(static_cast<std::size_t>(bytes));
    MPI_Pack(two, 2, MPI_DOUBLE, packed.data(), bytes, &at, row);
    int from = 0;
    MPI_Unpack(packed.data(), at, &from, unpacked, 2, MPI_DOUBLE, row);
    fold(row_rank * 100 + row_size), fold(unpacked, sizeof unpacked);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    // The program's own error handler, called through MPI_Comm_call_errhandler.
    MPI_Errhandler handler;
    MPI_Comm_create_errhandler(on_error, &handler);
    MPI_Comm_set_errhandler(with_info, handler);
    MPI_Comm_call_errhandler(with_info, MPI_ERR_OTHER);
    MPI_Errhandler_free(&handler);
    fold(handled);
    check(MPI_Comm_f2c(MPI_Comm_c2f(with_info)) == with_info, "a communicator's Fortran handle");
    MPI_Comm_free(&with_info);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&node);
}

// MPI_Comm_free only marks a communicator for deallocation: operations
// pending on it (receives, sends, a nonblocking collective, a persistent
// request) complete as if it had not been freed.
void freed_with_operations_pending(int rank, int size, int round) {
    MPI_Comm comm, again;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const int from = (rank + size - 1) % size, to = (rank + 1) % size;
    long in = -1, persistent_in = -1, again_in = -1, total = 0, out = rank * 1000L + round, out2 = out + 1;
    MPI_Request r[5];
    MPI_Irecv(&in, 1, MPI_LONG, from, 7, comm, &r[0]);
    MPI_Iallreduce(&out, &total, 1, MPI_LONG, MPI_SUM, comm, &r[1]);
    MPI_Recv_init(&persistent_in, 1, MPI_LONG, from, 8, comm, &r[2]);
    MPI_Start(&r[2]);
    MPI_Isend(&out, 1, MPI_LONG, to, 7, comm, &r[3]);
    MPI_Isend(&out2, 1, MPI_LONG, to, 8, comm, &r[4]);
    MPI_Comm_free(&comm);
    check(comm == MPI_COMM_NULL, "a freed communicator's handle");
    // A new communicator meanwhile (it may take the freed one's id); its
    // messages are sent once the old receives and the nonblocking
    // collective are done (docs/replica.md, Limits).
    MPI_Comm_dup(MPI_COMM_WORLD, &again);
    MPI_Waitall(5, r, MPI_STATUSES_IGNORE);
    MPI_Request_free(&r[2]);
    MPI_Sendrecv(&out2, 1, MPI_LONG, to, 7, &again_in, 1, MPI_LONG, from, 7, again, MPI_STATUS_IGNORE);
    MPI_Comm_free(&again);
    fold(in), fold(persistent_in), fold(again_in), fold(total);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 2 && std::strcmp(argv[2], "stdin") == 0) standard_input(rank);
    std::vector<char> buffer(1 << 16);
    MPI_Buffer_attach(buffer.data(), static_cast<int>(buffer.size()));
    for (int round = 0; round < rounds; ++round) {
        nonblocking_collectives(MPI_COMM_WORLD, round);
        attributes(round);
        point_to_point(rank, size, round);
        communicators(rank, size, round);
        freed_with_operations_pending(rank, size, round);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    void* detached = nullptr;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(size));
    MPI_Gather(&sum, 1, MPI_UINT64_T, sums.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        sum = 1469598103934665603ull;
        fold(sums);
        std::printf("coverage: checksum %016llx\n", static_cast<unsigned long long>(sum));
    }
    MPI_Finalize();
    return 0;
}
