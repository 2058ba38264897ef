#include <rampart/task/config.hpp>

#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace rampart {
namespace {

constexpr std::array<std::string_view, 1> known_names{"RAMPART_THREADS"};

int parse_positive_int(std::string_view name, std::string_view text) {
    int v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v <= 0)
        throw std::invalid_argument("rampart: " + std::string(name) + "='" + std::string(text) +
                                    "' is not a positive integer");
    return v;
}

}  // namespace

environment_config read_environment_config() {
    environment_config c;
    for (char** e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        if (!entry.starts_with("RAMPART_")) continue;
        auto eq = entry.find('=');
        std::string_view name = entry.substr(0, eq);
        std::string_view value = eq == std::string_view::npos ? std::string_view{} : entry.substr(eq + 1);
        if (name == "RAMPART_THREADS") {
            c.threads = parse_positive_int(name, value);
        } else {
            std::string known;
            for (auto k : known_names) known += (known.empty() ? "" : ", ") + std::string(k);
            throw std::invalid_argument("rampart: unknown environment variable " + std::string(name) +
                                        " (known: " + known + ")");
        }
    }
    return c;
}

}  // namespace rampart
