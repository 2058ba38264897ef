#pragma once
// What the parts of rampart-bench-pgas share: options, sampling, and the
// fault experiments (bench_pgas_faults.cpp).

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace pg = rampart::pgas;
using json = nlohmann::ordered_json;
using clock_type = std::chrono::steady_clock;

struct options {
    std::string mode = "latency";
    long iterations = 100000;
    int repeat = 11;
    std::string op = "put";
    std::size_t bytes = 8;
    int kill_rank = 1;
    long kill_at = -1;
    long gap_us = 50;
    bool json = false;
};

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/// The FT-ARMCI paper's experiment: each iteration's latency, a rank killed.
json fault_experiment(const options& o);
/// The time from a kill until every survivor knows.
json detection(const options& o);
