#include <rampart/store/placement.hpp>

#include <algorithm>
#include <cfloat>

namespace rampart::store {

namespace {
__extension__ typedef unsigned __int128 wide;  // a*b/d without overflow: ids times PEs

// The data-loss sum needs about 30 digits (see probability_of_data_loss).
#if defined(__SIZEOF_FLOAT128__)
__extension__ typedef __float128 quad;
constexpr double kGiveUp = 35;
#else
typedef long double quad;
constexpr double kGiveUp = LDBL_MANT_DIG >= 113 ? 35 : 18;  // 18: only ~1e-8 near 1 with 64-bit mantissas
#endif

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
}  // namespace

permutation::permutation(std::uint64_t n, std::uint64_t seed) : n_(n) {
    while (half_bits_ < 32 && (std::uint64_t{1} << (2 * half_bits_)) < n) ++half_bits_;
    half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
    std::uint64_t s = seed;
    for (auto& k : keys_) k = s = mix(s);
}

std::uint64_t permutation::round(std::uint64_t half, int i) const { return mix(half ^ keys_[i]) & half_mask_; }

std::uint64_t permutation::encrypt(std::uint64_t x) const {
    std::uint64_t left = x >> half_bits_, right = x & half_mask_;
    for (int i = 0; i < 4; ++i) {
        const std::uint64_t next = left ^ round(right, i);
        left = right;
        right = next;
    }
    return (left << half_bits_) | right;
}

std::uint64_t permutation::decrypt(std::uint64_t y) const {
    std::uint64_t left = y >> half_bits_, right = y & half_mask_;
    for (int i = 3; i >= 0; --i) {
        const std::uint64_t prev = right ^ round(left, i);
        right = left;
        left = prev;
    }
    return (left << half_bits_) | right;
}

// Cycle walking: a bijection on [0, 4^k) restricted to [0, n) by applying it
// again until the value falls inside; the domain is less than 4n, so a few
// steps on average.
std::uint64_t permutation::operator()(std::uint64_t x) const {
    if (x >= n_)
        throw std::invalid_argument("rampart::store::permutation: " + std::to_string(x) + " is not below " +
                                    std::to_string(n_));
    do x = encrypt(x);
    while (x >= n_);
    return x;
}

std::uint64_t permutation::inverse(std::uint64_t y) const {
    if (y >= n_)
        throw std::invalid_argument("rampart::store::permutation: " + std::to_string(y) + " is not below " +
                                    std::to_string(n_));
    do y = decrypt(y);
    while (y >= n_);
    return y;
}

node_order::node_order(const std::vector<int>& node_of_pe) {
    if (node_of_pe.empty()) throw std::invalid_argument("rampart::store::node_order: no PEs");
    std::vector<int> at(node_of_pe.size()), of(node_of_pe.size());
    for (std::size_t q = 0; q < at.size(); ++q) at[q] = static_cast<int>(q);
    std::stable_sort(at.begin(), at.end(), [&](int a, int b) {
        return node_of_pe[static_cast<std::size_t>(a)] < node_of_pe[static_cast<std::size_t>(b)];
    });
    bool identity = true;
    for (std::size_t i = 0; i < at.size(); ++i) {
        of[static_cast<std::size_t>(at[i])] = static_cast<int>(i);
        identity = identity && at[i] == static_cast<int>(i);
    }
    if (identity) return;  // the common case (ranks placed in blocks per node): no lookups
    at_ = std::make_shared<const std::vector<int>>(std::move(at));
    of_ = std::make_shared<const std::vector<int>>(std::move(of));
}

placement::placement(std::uint64_t blocks, int pes, int replicas, std::uint64_t range_blocks, std::uint64_t seed,
                     node_order order)
    : n_(blocks),
      p_(pes),
      r_(replicas),
      range_blocks_(range_blocks),
      ranges_(range_blocks ? (blocks + range_blocks - 1) / range_blocks : 0),
      perm_(std::max<std::uint64_t>(ranges_, 1), seed),
      order_(std::move(order)) {
    if (blocks == 0) throw std::invalid_argument("rampart::store: no blocks to place");
    if (pes < 1) throw std::invalid_argument("rampart::store: " + std::to_string(pes) + " PEs");
    if (replicas < 1 || replicas > pes)
        throw std::invalid_argument("rampart::store: " + std::to_string(replicas) + " copies on " +
                                    std::to_string(pes) + " PEs (need 1 <= r <= p)");
    if (order_.pes() != 0 && order_.pes() != pes)
        throw std::invalid_argument("rampart::store: an order of " + std::to_string(order_.pes()) + " PEs for " +
                                    std::to_string(pes) + " PEs");
}

int placement::first_holder(std::uint64_t id) const {
    if (id >= n_)
        throw std::invalid_argument("rampart::store: block " + std::to_string(id) + " is not below " +
                                    std::to_string(n_));
    const auto p = static_cast<wide>(p_);
    if (range_blocks_ == 0) return static_cast<int>(static_cast<wide>(id) * p / n_);
    return static_cast<int>(static_cast<wide>(perm_(id / range_blocks_)) * p / ranges_);
}

placement_unit placement::unit_of(std::uint64_t id) const {
    const int first = first_holder(id);
    if (range_blocks_ != 0) {
        const std::uint64_t begin = id / range_blocks_ * range_blocks_;
        return {begin, std::min(n_, begin + range_blocks_) - begin, first};
    }
    // PE q is first for ids [ceil(q n / p), ceil((q+1) n / p)).
    const auto bound = [this](int q) {
        const auto prod = static_cast<wide>(q) * n_;
        return static_cast<std::uint64_t>((prod + static_cast<unsigned>(p_) - 1) / static_cast<unsigned>(p_));
    };
    const std::uint64_t begin = bound(first), end = bound(first + 1);
    return {begin, end - begin, first};
}

std::vector<placement_unit> placement::units(std::uint64_t first, std::uint64_t count) const {
    if (count > n_ || first > n_ - count)
        throw std::invalid_argument("rampart::store: blocks [" + std::to_string(first) + ", " +
                                    std::to_string(first + count) + ") are not inside [0, " + std::to_string(n_) + ")");
    std::vector<placement_unit> out;
    for (std::uint64_t id = first, end = first + count; id < end;) {
        placement_unit u = unit_of(id);
        const std::uint64_t stop = std::min(end, u.first_id + u.count);
        out.push_back({id, stop - id, u.first_holder});
        id = stop;
    }
    return out;
}

long double probability_of_data_loss(int p, int r, int f) {
    if (r < 1 || p < r || p % r != 0)
        throw std::invalid_argument("rampart::store::probability_of_data_loss: r = " + std::to_string(r) +
                                    " does not divide p = " + std::to_string(p));
    if (f < 0 || f > p)
        throw std::invalid_argument("rampart::store::probability_of_data_loss: f = " + std::to_string(f) +
                                    " is not in [0, p]");
    const int groups = p / r;
    if (f < r) return 0;           // no group can be all dead yet
    if (f > p - groups) return 1;  // fewer survivors than groups: one group has none
    // The sum alternates, with terms up to about e^x where x = groups * pi is
    // the expected number of dead groups: the terms are computed from exact
    // ratios in quad precision, and past x = kGiveUp, where the cancellation
    // would show, P(no loss) <= (1 - pi)^groups <= e^-x (the "group dead"
    // events are negatively associated under sampling without replacement)
    // is below the rounding of the sum, so the answer is 1 to within ~1e-16.
    quad pi = 1;  // C(p - r, f - r) / C(p, f): one given group is all dead
    for (int i = 0; i < r; ++i) pi *= quad(f - i) / quad(p - i);
    if (groups * pi > kGiveUp) return 1;
    quad term = groups * pi, sum = term;  // term j: C(groups, j) C(p - jr, f - jr) / C(p, f)
    for (int j = 1; j < groups && (j + 1) * r <= f; ++j) {
        quad ratio = quad(groups - j) / quad(j + 1);
        for (int i = 0; i < r; ++i) ratio *= quad(f - j * r - i) / quad(p - j * r - i);
        term *= ratio;
        sum += (j % 2 ? -term : term);
        // The ratios fall with j, so once below 1/2 the rest is smaller than this term.
        if (ratio < quad(0.5) && term <= quad(1e-34L) * sum) break;
    }
    return std::clamp(static_cast<long double>(sum), 0.0L, 1.0L);
}

}  // namespace rampart::store
