#include <rampart/task/config.hpp>
#include <rampart/task/errors.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

extern char** environ;

namespace rampart {
namespace {

// The store's checkpoint names are read by the store (checkpoint_disk.cpp).
constexpr std::array<std::string_view, 10> known_names{
    "RAMPART_THREADS",      "RAMPART_KILL",           "RAMPART_REPORT",
    "RAMPART_SPARES",       "RAMPART_ERROR_RATE",     "RAMPART_SEED",
    "RAMPART_RANKS_PER_NODE", "RAMPART_CHECKPOINT_DIR", "RAMPART_CHECKPOINT_DISK_EVERY",
    "RAMPART_RESTART"};

int parse_int_at_least(std::string_view name, std::string_view text, int least, const char* what) {
    int v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v < least)
        throw rampart::invalid_argument("rampart: " + std::string(name) + "='" + std::string(text) + "' is not a " +
                                        what + " integer");
    return v;
}

// Edit distance (insertions, deletions, substitutions).
std::size_t distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

// The known name a misspelt one was meant to be, if one is close enough.
std::string closest_known(std::string_view name) {
    std::string_view best;
    std::size_t best_distance = name.size() / 3 + 1;  // farther: an unrelated name
    for (auto k : known_names)
        if (const auto d = distance(name, k); d < best_distance) {
            best = k;
            best_distance = d;
        }
    return best.empty() ? std::string() : " (did you mean " + std::string(best) + "?)";
}

}  // namespace

std::vector<kill_order> parse_kill_orders(const std::string& text) {
    std::vector<kill_order> orders;
    if (text.empty()) return orders;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(',', start);
        std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        auto bad = [&] {
            return rampart::invalid_argument("rampart: RAMPART_KILL item '" + item +
                                             "' is not RANK@SECONDSs, RANK@iterN, RANK@start, RANK@recovery or "
                                             "RANK@end, optionally followed by :stop (e.g. 1@1.5s, 2@iter40:stop)");
        };
        auto at = item.find('@');
        if (at == std::string::npos || at == 0) throw bad();
        kill_order k;
        auto [p, ec] = std::from_chars(item.data(), item.data() + at, k.rank);
        if (ec != std::errc{} || p != item.data() + at || k.rank < 0) throw bad();
        std::string when = item.substr(at + 1);
        if (when.size() > 5 && when.ends_with(":stop")) {
            k.hang = true;
            when.resize(when.size() - 5);
        }
        if (when == "start") {
            k.at_start = true;
        } else if (when == "recovery") {
            k.during_recovery = true;
        } else if (when == "end") {
            k.at_end = true;
        } else if (when.rfind("iter", 0) == 0) {
            std::uint64_t it = 0;
            auto [q, ec2] = std::from_chars(when.data() + 4, when.data() + when.size(), it);
            if (ec2 != std::errc{} || q != when.data() + when.size() || when.size() == 4) throw bad();
            k.iteration = it;
        } else if (when.size() > 1 && when.back() == 's') {
            char* e = nullptr;
            std::string num = when.substr(0, when.size() - 1);
            double sec = std::strtod(num.c_str(), &e);
            if (e != num.c_str() + num.size() || !(sec >= 0)) throw bad();
            k.seconds = sec;
        } else {
            throw bad();
        }
        orders.push_back(k);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return orders;
}

environment_config read_environment_config() {
    environment_config c;
    for (char** e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        if (!entry.starts_with("RAMPART_")) continue;
        auto eq = entry.find('=');
        std::string_view name = entry.substr(0, eq);
        std::string_view value = eq == std::string_view::npos ? std::string_view{} : entry.substr(eq + 1);
        if (name == "RAMPART_THREADS") {
            c.threads = parse_int_at_least(name, value, 1, "positive");
        } else if (name == "RAMPART_KILL") {
            c.kills = parse_kill_orders(std::string(value));
        } else if (name == "RAMPART_SPARES") {
            c.spares = parse_int_at_least(name, value, 0, "non-negative");
        } else if (name == "RAMPART_ERROR_RATE") {
            double v = -1;
            auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
            if (ec != std::errc{} || end != value.data() + value.size() || !(v >= 0.0 && v <= 1.0))
                throw rampart::invalid_argument("rampart: RAMPART_ERROR_RATE='" + std::string(value) +
                                                "' is not a probability in [0, 1]");
            c.error_rate = v;
        } else if (name == "RAMPART_SEED") {
            auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), c.seed);
            if (ec != std::errc{} || end != value.data() + value.size() || value.empty())
                throw rampart::invalid_argument("rampart: RAMPART_SEED='" + std::string(value) +
                                                "' is not a non-negative integer");
        } else if (name == "RAMPART_RANKS_PER_NODE") {
            c.ranks_per_node = parse_int_at_least(name, value, 1, "positive");
        } else if (name == "RAMPART_REPORT") {
            if (value.empty()) throw rampart::invalid_argument("rampart: RAMPART_REPORT is empty");
            c.report = std::string(value);
        } else if (std::find(known_names.begin(), known_names.end(), name) == known_names.end()) {
            c.warnings.push_back("rampart: warning: unknown environment variable " + std::string(name) + " ignored" +
                                 closest_known(name));
        }
    }
    return c;
}

}  // namespace rampart
