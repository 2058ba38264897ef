// The IV-D data-loss model (probability_of_data_loss) against brute force,
// and the simulator on the real placement against the model.
#include <rampart/store/data_loss_simulation.hpp>
#include <rampart/store/placement.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

using rampart::store::loss_simulator;
using rampart::store::model_failures_until_loss;
using rampart::store::placement;
using rampart::store::probability_of_data_loss;
using rampart::store::simulate_failures_until_loss;
using rampart::store::summarize_failures;

namespace {

// The PE masks of the holder groups, taken from the placement itself.
std::vector<unsigned> group_masks(int p, int r) {
    const placement where(64, p, r, 0, 1);
    std::set<unsigned> masks;
    for (int first = 0; first < p; ++first) {
        unsigned m = 0;
        for (int k = 0; k < r; ++k) m |= 1u << where.holder_of_copy(first, k);
        masks.insert(m);
    }
    return {masks.begin(), masks.end()};
}

bool lost(unsigned failed, const std::vector<unsigned>& groups) {
    return std::any_of(groups.begin(), groups.end(), [&](unsigned g) { return (failed & g) == g; });
}

}  // namespace

TEST(DataLossModel, MatchesAllFailureSetsOfSmallMachines) {
    for (auto [p, r] : {std::pair{8, 2}, {8, 4}, {6, 3}, {6, 2}, {12, 3}, {12, 4}, {12, 2}, {9, 3}}) {
        const auto groups = group_masks(p, r);
        ASSERT_EQ(groups.size(), static_cast<std::size_t>(p / r)) << p << " " << r;
        std::vector<double> with_loss(p + 1, 0), all(p + 1, 0);
        for (unsigned failed = 0; failed < (1u << p); ++failed) {
            const int f = std::popcount(failed);
            all[f] += 1;
            with_loss[f] += lost(failed, groups);
        }
        for (int f = 0; f <= p; ++f)
            EXPECT_NEAR(static_cast<double>(probability_of_data_loss(p, r, f)), with_loss[f] / all[f], 1e-15)
                << "p=" << p << " r=" << r << " f=" << f;
    }
}

TEST(DataLossModel, ZeroBelowRAndOneWhenSomeGroupMustBeEmpty) {
    for (auto [p, r] : {std::pair{64, 2}, {64, 4}, {96, 3}, {1024, 4}, {16384, 2}, {12288, 3}, {16384, 4}}) {
        const int groups = p / r;
        for (int f = 0; f < r; ++f) EXPECT_EQ(probability_of_data_loss(p, r, f), 0.0L);
        // One failure for each group's every copy: exactly groups / C(p, r).
        long double one_group = groups;
        for (int i = 0; i < r; ++i) one_group *= static_cast<long double>(r - i) / (p - i);
        EXPECT_NEAR(static_cast<double>(probability_of_data_loss(p, r, r) / one_group), 1.0, 1e-15);
        // Fewer survivors than groups (pigeonhole): loss.
        for (int f = p - groups + 1; f <= p; ++f) EXPECT_EQ(probability_of_data_loss(p, r, f), 1.0L) << f;
    }
    // One survivor per group is still possible: 2^32 / C(64, 32) and 4^16 / C(64, 48).
    EXPECT_NEAR(static_cast<double>(1 - probability_of_data_loss(64, 2, 32)), 2.3436160204e-09, 1e-18);
    EXPECT_NEAR(static_cast<double>(1 - probability_of_data_loss(64, 4, 48)), 8.7916693431e-06, 1e-15);
    // r = 1: every failure loses data; r = p: only losing every PE does.
    EXPECT_EQ(probability_of_data_loss(8, 1, 1), 1.0L);
    EXPECT_EQ(probability_of_data_loss(8, 8, 7), 0.0L);
    EXPECT_EQ(probability_of_data_loss(8, 8, 8), 1.0L);
}

TEST(DataLossModel, MonotoneInTheNumberOfFailures) {
    for (auto [p, r] : {std::pair{64, 2}, {64, 4}, {96, 3}, {4096, 2}, {16384, 2}, {12288, 3}, {16384, 4}}) {
        long double previous = 0;
        for (int f = 0; f <= p; ++f) {
            const long double v = probability_of_data_loss(p, r, f);
            ASSERT_GE(v, 0.0L);
            ASSERT_LE(v, 1.0L);
            ASSERT_GE(v, previous - 1e-18L) << "p=" << p << " r=" << r << " f=" << f;
            previous = v;
        }
    }
}

// Reference values from exact rational arithmetic (Python's integers and
// fractions). The tail is where a long double sum with lgamma terms used to
// cancel into noise (1500 failures of 16384 at r = 2 came out as 0).
TEST(DataLossModel, AccurateForLargeMachines) {
    EXPECT_NEAR(static_cast<double>(probability_of_data_loss(16384, 2, 100)), 2.62118417016889038162e-01, 1e-17);
    EXPECT_NEAR(static_cast<double>(1 - probability_of_data_loss(16384, 2, 500)), 3.87861298361521231529e-04, 1e-18);
    EXPECT_NEAR(static_cast<double>(1 - probability_of_data_loss(16384, 2, 800)) / 1.22962043501713557730e-09, 1, 1e-6);
    EXPECT_NEAR(static_cast<double>(1 - probability_of_data_loss(16384, 2, 1000)), 7.75357548100875281289e-15, 1e-18);
    EXPECT_EQ(probability_of_data_loss(16384, 2, 1500), 1.0L);  // exactly 1 - 1.4e-33
    EXPECT_NEAR(static_cast<double>(probability_of_data_loss(16384, 4, 2000)), 5.97517428178253040549e-01, 1e-17);
    EXPECT_NEAR(static_cast<double>(1 - probability_of_data_loss(16384, 4, 4000)), 3.39555573350449068525e-07, 1e-17);
    EXPECT_NEAR(static_cast<double>(1 - probability_of_data_loss(16384, 4, 5000)), 0, 1e-16);  // exactly 7.1e-17
    for (int f = 5000; f <= 16384; f += 997) EXPECT_EQ(probability_of_data_loss(16384, 4, f), 1.0L) << f;
}

TEST(DataLossModel, RejectsInvalidArguments) {
    EXPECT_THROW(probability_of_data_loss(10, 3, 4), std::invalid_argument);  // r does not divide p
    EXPECT_THROW(probability_of_data_loss(4, 8, 2), std::invalid_argument);   // r > p
    EXPECT_THROW(probability_of_data_loss(8, 0, 2), std::invalid_argument);
    EXPECT_THROW(probability_of_data_loss(0, 1, 0), std::invalid_argument);
    EXPECT_THROW(probability_of_data_loss(8, 2, -1), std::invalid_argument);
    EXPECT_THROW(probability_of_data_loss(8, 2, 9), std::invalid_argument);
    EXPECT_THROW(model_failures_until_loss(10, 4), std::invalid_argument);
}

// E[F] = sum_f (1 - P(loss after f)) against the mean over every order in
// which all PEs can fail.
TEST(DataLossModel, MeanFailuresUntilLossOverAllFailureOrders) {
    for (auto [p, r] : {std::pair{8, 2}, {8, 4}, {6, 3}, {9, 3}, {6, 2}}) {
        const auto groups = group_masks(p, r);
        std::vector<int> order(p);
        std::iota(order.begin(), order.end(), 0);
        double sum = 0, orders = 0;
        std::vector<double> at(p + 1, 0);
        do {
            unsigned failed = 0;
            int f = 0;
            while (!lost(failed, groups)) failed |= 1u << order[f++];
            sum += f;
            at[f] += 1;
            orders += 1;
        } while (std::next_permutation(order.begin(), order.end()));
        const auto model = model_failures_until_loss(p, r);
        EXPECT_NEAR(model.mean, sum / orders, 1e-12) << "p=" << p << " r=" << r;
        // Quantiles: the smallest count whose share of orders reaches q.
        const auto quantile = [&](double q) {
            double below = 0;
            for (int f = 0; f <= p; ++f)
                if ((below += at[f]) >= q * orders - 1e-9) return f;
            return p;
        };
        EXPECT_EQ(model.p10, quantile(0.1));
        EXPECT_EQ(model.median, quantile(0.5));
        EXPECT_EQ(model.p90, quantile(0.9));
    }
}

TEST(LossSimulator, HolderSetsAreThePlacementsCopyGroups) {
    // r | p, with and without permutation: the p/r residue classes mod p/r.
    for (std::uint64_t range_blocks : {0, 1, 16}) {
        const placement where(12 * 100, 12, 3, range_blocks, 5);
        const loss_simulator sim(where);
        ASSERT_EQ(sim.holder_sets(), 4u);
        for (std::size_t i = 0; i < 4; ++i) {
            const auto s = sim.holder_set(i);
            ASSERT_EQ(s.size(), 3u);
            EXPECT_EQ(s[1] - s[0], 4);
            EXPECT_EQ(s[2] - s[1], 4);
        }
    }
    // Against every block's holders, also with r not dividing p and with
    // fewer blocks or ranges than groups.
    for (auto [blocks, p, r, range_blocks] : {std::tuple{500ULL, 10, 3, 0ULL},
                                              {500ULL, 10, 3, 7ULL},
                                              {3ULL, 12, 3, 0ULL},
                                              {40ULL, 12, 2, 20ULL},
                                              {1000ULL, 7, 7, 9ULL}}) {
        const placement where(blocks, p, r, range_blocks, 3);
        std::set<std::vector<int>> expected;
        for (std::uint64_t id = 0; id < blocks; ++id) {
            std::vector<int> s;
            for (int k = 0; k < r; ++k) s.push_back(where.holder(id, k));
            std::sort(s.begin(), s.end());
            expected.insert(s);
        }
        const loss_simulator sim(where);
        std::set<std::vector<int>> got;
        for (std::size_t i = 0; i < sim.holder_sets(); ++i) got.insert(sim.holder_set(i));
        EXPECT_EQ(got, expected) << blocks << " " << p << " " << r << " " << range_blocks;
    }
}

TEST(LossSimulator, FailureCountsAreReproducibleAndInRange) {
    const placement where(1 << 16, 64, 4, 64, 9);
    const auto a = simulate_failures_until_loss(where, 500, 42);
    const auto b = simulate_failures_until_loss(where, 500, 42);
    const auto c = simulate_failures_until_loss(where, 500, 43);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    for (int f : a) {
        EXPECT_GE(f, 4);
        EXPECT_LE(f, 64 - 16 + 1);  // more failures leave fewer survivors than groups
    }
    EXPECT_THROW(simulate_failures_until_loss(where, 0, 1), std::invalid_argument);
    // r = p: the only holder set is every PE.
    EXPECT_EQ(simulate_failures_until_loss(placement(10, 5, 5, 0, 1), 3, 1), (std::vector<int>{5, 5, 5}));
}

TEST(LossSimulator, SummaryQuantilesAndMean) {
    const auto s = summarize_failures({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
    EXPECT_DOUBLE_EQ(s.mean, 5.5);
    EXPECT_EQ(s.p10, 1);
    EXPECT_EQ(s.median, 5);
    EXPECT_EQ(s.p90, 9);
    EXPECT_NEAR(s.standard_error, std::sqrt(55.0 / 6) / std::sqrt(10.0), 1e-12);
    EXPECT_THROW(summarize_failures({}), std::invalid_argument);
}

// Fixed seed, so deterministic; 4000 trials put the standard error of the
// mean near 0.8% (r = 2) and 0.4% (r = 4), far inside the 5% figure.
TEST(LossSimulator, AgreesWithTheModel) {
    for (auto [p, r] : {std::pair{64, 2}, {64, 4}, {96, 3}, {1024, 2}, {1024, 4}, {1536, 3}}) {
        const placement where(static_cast<std::uint64_t>(p) * 256, p, r, 64, 11);
        const auto sim = summarize_failures(simulate_failures_until_loss(where, 4000, 2024));
        const auto model = model_failures_until_loss(p, r);
        EXPECT_LT(std::abs(sim.mean - model.mean) / model.mean, 0.05) << "p=" << p << " r=" << r;
        EXPECT_LT(std::abs(sim.mean - model.mean), 4 * sim.standard_error) << "p=" << p << " r=" << r;
        EXPECT_NEAR(sim.median, model.median, 0.05 * model.median + 1) << "p=" << p << " r=" << r;
    }
}

// Whole nodes of m consecutive PEs fail (rampart-run's blocks of ranks per
// node). With m | p/r the copies of a block are on r different nodes and the
// nodes form p/(r m) groups; the simulation then agrees with the model on
// p/m nodes.
TEST(LossSimulator, NodesOfConsecutivePesFailWhole) {
    const placement where(1 << 18, 1024, 4, 64, 7);
    loss_simulator nodes(where, 8);
    EXPECT_EQ(nodes.pes(), 1024);
    EXPECT_EQ(nodes.units(), 128);
    ASSERT_EQ(nodes.holder_sets(), 32u);
    for (std::size_t i = 0; i < nodes.holder_sets(); ++i) {
        const std::vector<int> s = nodes.holder_set(i);
        ASSERT_EQ(s.size(), 4u) << "two copies of a block on one node";
        EXPECT_EQ(s[1] - s[0], 32) << "copies p/r PEs apart are p/(r m) nodes apart";
    }
    const auto sim = rampart::store::summarize_failures(rampart::store::simulate_failures_until_loss(nodes, 4000, 3));
    const auto model = rampart::store::model_node_failures_until_loss(1024, 4, 8);
    EXPECT_NEAR(sim.mean, model.mean, 0.03 * model.mean);
    EXPECT_DOUBLE_EQ(model.mean, model_failures_until_loss(128, 4).mean);
}

// Where m does not divide p/r, copies share nodes: 12 PEs, 2 copies 6 apart,
// nodes of 4 PEs give the node pairs {0,1}, {0,2}, {1,2}, so any two node
// failures lose data; the model refuses such a placement.
TEST(LossSimulator, CopiesThatShareANodeAreLostWithIt) {
    const placement where(12 * 64, 12, 2, 0, 1);
    loss_simulator nodes(where, 4);
    EXPECT_EQ(nodes.units(), 3);
    std::set<std::vector<int>> sets;
    for (std::size_t i = 0; i < nodes.holder_sets(); ++i) sets.insert(nodes.holder_set(i));
    EXPECT_EQ(sets, (std::set<std::vector<int>>{{0, 1}, {0, 2}, {1, 2}}));
    for (int f : rampart::store::simulate_failures_until_loss(nodes, 50, 9)) EXPECT_EQ(f, 2);
    EXPECT_THROW(rampart::store::model_node_failures_until_loss(12, 2, 4), std::invalid_argument);
    EXPECT_THROW(loss_simulator(where, 0), std::invalid_argument);
    EXPECT_EQ(loss_simulator(where, 1).units(), 12);
}
