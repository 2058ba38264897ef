// Messages between ranks as futures: a 1-D diffusion on a ring of ranks, 4
// points each. Every step is a dataflow task that runs once this rank's field
// and its neighbours' edge values have arrived; main waits only for the last.
//
//   tools/rampart-run -n 4 -- build/apps/examples/rampart-example-futures
//
// 256 units start on one point and each step passes a quarter of every point
// to either side, so after 4 steps rank 0 prints the binomial row C(8, k):
// result 0 0 0 0 1 8 28 56 70 56 28 8 1 0 0 0
#include <rampart/rampart.hpp>

#include <cstdio>
#include <vector>

namespace comm = rampart::comm;
using field = std::vector<double>;

constexpr int points = 4, steps = 4;
constexpr int to_right = 0, to_left = 1, to_rank_0 = 2;  // tags: messages on one tag arrive in order

// The next field, from this one and the neighbours' edge values.
field step(const field& x, double from_left, double from_right) {
    field y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double l = i == 0 ? from_left : x[i - 1], r = i + 1 == x.size() ? from_right : x[i + 1];
        y[i] = 0.25 * l + 0.5 * x[i] + 0.25 * r;
    }
    return y;
}

void send_edges(const field& x, int left, int right) {
    comm::isend(left, to_left, x.front());
    comm::isend(right, to_right, x.back());
}

int main() {
    rampart::runtime rt;
    const int me = comm::rank(), n = comm::size();
    const int left = (me + n - 1) % n, right = (me + 1) % n;

    field start(points, 0.0);
    if (me == n / 2) start[0] = 256.0;
    send_edges(start, left, right);
    rampart::future<field> u = rampart::make_ready_future(start);
    for (int s = 0; s < steps; ++s)  // no waiting here: each step is a task that waits for its inputs
        u = rampart::dataflow(
            [=](auto x, auto l, auto r) {
                field y = step(x.get(), l.get(), r.get());
                if (s + 1 < steps) send_edges(y, left, right);  // as soon as it is computed
                return y;
            },
            std::move(u), comm::irecv<double>(left, to_right), comm::irecv<double>(right, to_left));

    field mine = u.get();
    if (me != 0) {
        comm::isend(0, to_rank_0, mine);
        return 0;
    }
    std::printf("result");
    for (int r = 0; r < n; ++r) {
        const field part = r == 0 ? mine : comm::irecv<field>(r, to_rank_0).get();
        for (double v : part) std::printf(" %g", v);
    }
    std::printf("\n");
}
