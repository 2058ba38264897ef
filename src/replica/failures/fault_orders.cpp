#include "fault_orders.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace rampart::replica::detail {

namespace {
// One order, R.K@WHEN; false when malformed.
bool parse_one(const std::string& item, kill_order& k) {
    char when[64] = {};
    int used = 0;
    if (std::sscanf(item.c_str(), "%d.%d@%63s%n", &k.rank, &k.replica, when, &used) != 3 ||
        used != static_cast<int>(item.size()) || k.rank < 0 || k.replica < 0)
        return false;
    const std::string w = when;
    char* end = nullptr;
    if (w == "start" || w == "state") {
        k.at = w == "start" ? kill_order::when::start : kill_order::when::state;
        return true;
    }
    if (w == "recreate") {
        k.at = kill_order::when::recreate;
        k.message = 1;
        return true;
    }
    if (w.size() > 1 && w.back() == 's' && std::isdigit(static_cast<unsigned char>(w[0]))) {
        k.at = kill_order::when::seconds;
        k.seconds = std::strtod(w.c_str(), &end);
        return end == w.c_str() + w.size() - 1;
    }
    for (auto [prefix, at] : {std::pair{"send", kill_order::when::send}, std::pair{"after", kill_order::when::after},
                              std::pair{"recreate", kill_order::when::recreate}}) {
        const std::string p = prefix;
        if (w.rfind(p, 0) != 0 || w.size() == p.size() || !std::isdigit(static_cast<unsigned char>(w[p.size()])))
            continue;
        k.at = at;
        k.message = std::strtol(w.c_str() + p.size(), &end, 10);
        return *end == '\0';
    }
    return false;
}
}  // namespace

std::vector<kill_order> parse_kill_orders(const std::string& text) {
    std::vector<kill_order> out;
    std::size_t from = 0;
    while (from < text.size()) {
        const std::size_t comma = text.find(',', from);
        const std::string item = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        from = comma == std::string::npos ? text.size() : comma + 1;
        kill_order k;
        if (!parse_one(item, k))
            throw std::runtime_error("RAMPART_KILL: '" + item + "': expected RANK.REPLICA@start|1.5s|sendN|afterN|recreate[N]|state");
        out.push_back(k);
    }
    return out;
}

void die_by_order(int process, const char* why) {
    if (const char* prefix = std::getenv("RAMPART_REPORT"); prefix && *prefix) {
        const auto us =
            std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        std::ofstream(std::string(prefix) + ".replica.kill." + std::to_string(process))
            << nlohmann::json{{"process", process}, {"why", why}, {"killed_us", us}}.dump() << "\n";
    }
    raise(SIGKILL);
    std::abort();
}

void fault_orders::start(int rank, int replica, int process) {
    process_ = process;
    const char* text = std::getenv("RAMPART_KILL");
    if (!text || !*text) return;
    for (const kill_order& k : parse_kill_orders(text))
        if (k.rank == rank && k.replica == replica) mine_.push_back(k);
    for (const kill_order& k : mine_) {
        if (k.at == kill_order::when::start) die_by_order(process, "start");
        if (k.at == kill_order::when::seconds)
            std::thread([p = process, s = k.seconds] {
                std::this_thread::sleep_for(std::chrono::duration<double>(s));
                die_by_order(p, "time");
            }).detach();
    }
}

void fault_orders::recreating(int rank, int replica, int nth, int process) const {
    const char* text = std::getenv("RAMPART_KILL");
    if (!text || !*text) return;
    for (const kill_order& k : parse_kill_orders(text))
        if (k.rank == rank && k.replica == replica && k.at == kill_order::when::recreate && k.message == nth)
            die_by_order(process, "recreate");
}

void fault_orders::sending_state() const {
    for (const kill_order& k : mine_)
        if (k.at == kill_order::when::state) die_by_order(process_, "state");
}

void fault_orders::before_message(long n) const {
    for (const kill_order& k : mine_)
        if (k.at == kill_order::when::send && k.message == n) die_by_order(process_, "send");
}

void fault_orders::after_message(long n) const {
    for (const kill_order& k : mine_)
        if (k.at == kill_order::when::after && k.message == n) die_by_order(process_, "after");
}

}  // namespace rampart::replica::detail
