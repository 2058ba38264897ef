#pragma once

#include <rampart/resilience/errors.hpp>

#include <concepts>
#include <cstddef>
#include <optional>
#include <vector>

namespace rampart {

/// The default vote: the value that more than half of the results share.
/// Returns no result when there is no strict majority.
///
///     auto f = rampart::async_replicate_vote(3, rampart::majority_vote{}, compute, x);
struct majority_vote {
    template <std::equality_comparable T>
    std::optional<T> operator()(std::vector<T>&& results) const {
        const std::size_t n = results.size();
        for (std::size_t i = 0; i < n; ++i) {
            std::size_t same = 0;
            for (std::size_t j = 0; j < n; ++j) same += (results[j] == results[i]) ? 1 : 0;
            if (2 * same > n) return std::move(results[i]);
            if (2 * (n - i) <= n) break;  // no later candidate can reach a majority it has not shown
        }
        return std::nullopt;
    }
};

}  // namespace rampart
