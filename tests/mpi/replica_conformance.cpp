// A plain MPI program that calls every point-to-point, request, collective,
// communicator, group and topology call that process replication supports,
// folding every result into one checksum. Run natively and replicated (with
// and without killed replicas), it must print the same checksum.
// usage: replica_conformance [rounds]

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
void fold(int v) { fold(&v, sizeof v); }

// Not commutative: the result depends on the order of the operands.
void affine(void* in, void* inout, int* len, MPI_Datatype*) {
    auto* a = static_cast<double*>(in);
    auto* b = static_cast<double*>(inout);
    for (int i = 0; i + 1 < *len; i += 2) {
        const double m = a[i] * b[i], c = a[i + 1] * b[i] + b[i + 1];
        b[i] = m;
        b[i + 1] = c;
    }
}

// `wild`: a communicator of its own for receives from any source and any
// tag, which would otherwise take other phases' messages.
void point_to_point(int rank, int size, int round, MPI_Comm wild) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    std::vector<int> out(64 + round), in(out.size());
    std::iota(out.begin(), out.end(), rank * 1000 + round);
    MPI_Request r[4];
    MPI_Irecv(in.data(), static_cast<int>(in.size()), MPI_INT, left, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_INT, right, 1, MPI_COMM_WORLD, &r[1]);
    MPI_Status st[2];
    MPI_Waitall(2, r, st);
    int count = 0;
    MPI_Get_count(&st[0], MPI_INT, &count);
    fold(in);
    fold(count + st[0].MPI_SOURCE * 7 + st[0].MPI_TAG);
    // Synchronous and probed: the size is learnt before the receive.
    if (rank % 2 == 0 && right != rank) MPI_Ssend(out.data(), 5, MPI_INT, right, 2, MPI_COMM_WORLD);
    if (rank % 2 == 1 || (size % 2 == 1 && rank == 0 && size > 1)) {
        MPI_Status ps;
        MPI_Probe(left, 2, MPI_COMM_WORLD, &ps);
        MPI_Get_count(&ps, MPI_INT, &count);
        std::vector<int> got(static_cast<std::size_t>(count));
        MPI_Recv(got.data(), count, MPI_INT, ps.MPI_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fold(got);
    }
    // From any source and any tag, placed by the status: the sum of what came
    // does not depend on the order.
    int mine = rank + round, total = 0;
    std::vector<MPI_Request> sends;
    for (int p = 0; p < size; ++p)
        if (p != rank) MPI_Isend(&mine, 1, MPI_INT, p, 3 + p % 2, wild, &sends.emplace_back());
    std::vector<int> from(static_cast<std::size_t>(size), -1);
    for (int k = 0; k + 1 < size; ++k) {
        int v = 0, flag = 0;
        MPI_Status s;
        while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, wild, &flag, &s);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, wild, &s);
        from[static_cast<std::size_t>(s.MPI_SOURCE)] = v * 10 + s.MPI_TAG;
        total += v;
    }
    MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    fold(from);
    fold(total);
}

void requests(int rank, int size, int round) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    // Persistent requests, started twice.
    double out = rank + 0.5 * round, in = 0;
    MPI_Request p[2];
    MPI_Recv_init(&in, 1, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &p[0]);
    MPI_Send_init(&out, 1, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &p[1]);
    for (int k = 0; k < 2; ++k) {
        MPI_Startall(2, p);
        int done = 0, index = 0, outcount = 0, indices[2];
        MPI_Waitany(2, p, &index, MPI_STATUS_IGNORE);
        MPI_Waitsome(2, p, &outcount, indices, MPI_STATUSES_IGNORE);
        while (!done) MPI_Testall(2, p, &done, MPI_STATUSES_IGNORE);
        fold(&in, sizeof in);
        out += in;
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    // A receive that nothing matches, cancelled.
    MPI_Request never;
    int nothing = 0, cancelled = 0;
    MPI_Irecv(&nothing, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &never);
    MPI_Cancel(&never);
    MPI_Status cs;
    MPI_Wait(&never, &cs);
    MPI_Test_cancelled(&cs, &cancelled);
    fold(cancelled);
    // Sendrecv_replace with a strided datatype.
    std::vector<double> grid(12, rank + round);
    MPI_Datatype column;
    MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MPI_Sendrecv_replace(grid.data(), 1, column, right, 6, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&column);
    fold(grid);
}

void collectives(MPI_Comm comm, MPI_Op affine_op, int round) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const auto n = static_cast<std::size_t>(size);
    MPI_Barrier(comm);
    std::vector<double> v{1.0 + 0.25 * rank, 0.5 * rank + round}, r(2), all(2 * n);
    MPI_Bcast(v.data(), 1, MPI_DOUBLE, size - 1, comm);
    MPI_Reduce(v.data(), r.data(), 2, MPI_DOUBLE, affine_op, size / 2, comm);
    if (rank == size / 2) fold(r);
    MPI_Allreduce(v.data(), r.data(), 2, MPI_DOUBLE, MPI_SUM, comm);
    fold(r);
    MPI_Allreduce(MPI_IN_PLACE, v.data(), 2, MPI_DOUBLE, affine_op, comm);
    fold(v);
    std::vector<int> counts(n), displs(n), mine(static_cast<std::size_t>(rank + 1), rank), got(n * (n + 1) / 2);
    for (std::size_t i = 0; i < n; ++i)
        counts[i] = static_cast<int>(i + 1), displs[i] = static_cast<int>(i * (i + 1) / 2);
    MPI_Gatherv(mine.data(), rank + 1, MPI_INT, got.data(), counts.data(), displs.data(), MPI_INT, 0, comm);
    if (rank == 0) fold(got);
    MPI_Allgatherv(mine.data(), rank + 1, MPI_INT, got.data(), counts.data(), displs.data(), MPI_INT, comm);
    fold(got);
    MPI_Scatterv(got.data(), counts.data(), displs.data(), MPI_INT, mine.data(), rank + 1, MPI_INT, size - 1, comm);
    fold(mine);
    std::vector<double> each(2 * n, rank), back(2 * n);
    MPI_Gather(v.data(), 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, comm);
    MPI_Scatter(all.data(), 2, MPI_DOUBLE, r.data(), 2, MPI_DOUBLE, 0, comm);
    MPI_Allgather(r.data(), 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, comm);
    fold(all);
    for (std::size_t i = 0; i < each.size(); ++i) each[i] = rank * 100.0 + static_cast<double>(i);
    MPI_Alltoall(each.data(), 2, MPI_DOUBLE, back.data(), 2, MPI_DOUBLE, comm);
    fold(back);
    std::vector<int> sc(n, 2), sd(n), rc(n, 2), rd(n);
    for (std::size_t i = 0; i < n; ++i) sd[i] = rd[i] = static_cast<int>(2 * i);
    MPI_Alltoallv(each.data(), sc.data(), sd.data(), MPI_DOUBLE, back.data(), rc.data(), rd.data(), MPI_DOUBLE, comm);
    fold(back);
    MPI_Reduce_scatter_block(each.data(), r.data(), 2, MPI_DOUBLE, MPI_SUM, comm);
    fold(r);
    MPI_Reduce_scatter(each.data(), r.data(), rc.data(), MPI_DOUBLE, affine_op, comm);
    fold(r);
    MPI_Scan(v.data(), r.data(), 2, MPI_DOUBLE, affine_op, comm);
    fold(r);
    MPI_Exscan(v.data(), r.data(), 2, MPI_DOUBLE, MPI_SUM, comm);
    if (rank > 0) fold(r);
    MPI_Request q[3];
    double b = rank == 0 ? 42.0 + round : 0.0, s = rank, t = 0;
    MPI_Ibarrier(comm, &q[0]);
    MPI_Ibcast(&b, 1, MPI_DOUBLE, 0, comm, &q[1]);
    MPI_Iallreduce(&s, &t, 1, MPI_DOUBLE, MPI_MAX, comm, &q[2]);
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
    fold(&b, sizeof b);
    fold(&t, sizeof t);
}

void communicators(MPI_Op affine_op, int round) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, half, odd = MPI_COMM_NULL, cart;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    collectives(dup, affine_op, round);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    collectives(half, affine_op, round);
    MPI_Group world, odds;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    std::vector<int> ranks;
    for (int r = 1; r < size; r += 2) ranks.push_back(r);
    MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &odds);
    std::vector<int> translated(ranks.size());
    MPI_Group_translate_ranks(odds, static_cast<int>(ranks.size()), std::vector<int>(ranks.size(), 0).data(), world,
                              translated.data());
    fold(translated);
    MPI_Comm_create(MPI_COMM_WORLD, odds, &odd);
    if (odd != MPI_COMM_NULL) {
        collectives(odd, affine_op, round);
        MPI_Comm_free(&odd);
    }
    MPI_Group_free(&odds);
    MPI_Group_free(&world);
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], src, dst;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    double mine = rank + round, from = -1;
    MPI_Sendrecv(&mine, 1, MPI_DOUBLE, dst, 8, &from, 1, MPI_DOUBLE, src, 8, cart, MPI_STATUS_IGNORE);
    fold(&from, sizeof from);
    fold(coords[0] * 10 + coords[1]);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op affine_op;
    MPI_Op_create(&affine, 0, &affine_op);
    MPI_Comm wild;
    MPI_Comm_dup(MPI_COMM_WORLD, &wild);
    for (int round = 0; round < rounds; ++round) {
        point_to_point(rank, size, round, wild);
        requests(rank, size, round);
        collectives(MPI_COMM_WORLD, affine_op, round);
        communicators(affine_op, round);
    }
    MPI_Op_free(&affine_op);
    MPI_Comm_free(&wild);
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(size));
    MPI_Gather(&sum, 1, MPI_UINT64_T, sums.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        sum = 1469598103934665603ull;
        fold(sums);
        std::printf("conformance: checksum %016llx\n", static_cast<unsigned long long>(sum));
    }
    MPI_Finalize();
    return 0;
}
