#include "fault_orders.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <thread>

namespace rampart::replica::detail {

std::vector<kill_order> parse_kill_orders(const std::string& text) {
    static const std::regex one(R"(^(\d+)\.(\d+)@(start|(\d+(\.\d+)?)s|send(\d+)|after(\d+))$)");
    std::vector<kill_order> out;
    std::size_t from = 0;
    while (from < text.size()) {
        const std::size_t comma = text.find(',', from);
        const std::string item = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        from = comma == std::string::npos ? text.size() : comma + 1;
        std::smatch m;
        if (!std::regex_match(item, m, one))
            throw std::runtime_error("RAMPART_KILL: '" + item + "': expected RANK.REPLICA@start|1.5s|sendN|afterN");
        kill_order k;
        k.rank = std::stoi(m[1]);
        k.replica = std::stoi(m[2]);
        if (m[3] == "start") {
            k.at = kill_order::when::start;
        } else if (m[4].matched) {
            k.at = kill_order::when::seconds;
            k.seconds = std::stod(m[4]);
        } else if (m[6].matched) {
            k.at = kill_order::when::send;
            k.message = std::stol(m[6]);
        } else {
            k.at = kill_order::when::after;
            k.message = std::stol(m[7]);
        }
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

void fault_orders::before_message(long n) const {
    for (const kill_order& k : mine_)
        if (k.at == kill_order::when::send && k.message == n) die_by_order(process_, "send");
}

void fault_orders::after_message(long n) const {
    for (const kill_order& k : mine_)
        if (k.at == kill_order::when::after && k.message == n) die_by_order(process_, "after");
}

}  // namespace rampart::replica::detail
