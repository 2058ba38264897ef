// What a rank leaves behind for the launcher: the kill orders of fault
// injection carried out (a note of the time, then SIGKILL or SIGSTOP), the
// iteration it reached, and its JSON report at the end of its program and at
// shutdown.

#include "engine_impl.hpp"

#include <rampart/task/counters.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

namespace rampart::comm::detail {

const kill_order* engine::my_kill_order() const {
    int seen = 0;
    for (const auto& k : config_.kills)
        if (k.rank == rank_ && seen++ == incarnation_) return &k;
    return nullptr;
}

void engine::start_kill_timer() {
    if (const kill_order* k = my_kill_order(); k && k->seconds)
        std::thread([this, s = *k->seconds] {
            std::this_thread::sleep_for(std::chrono::duration<double>(s));
            die("time");
        }).detach();
}

void engine::die(const char* why) {
    const kill_order* k = my_kill_order();
    const bool hang = k && k->hang;
    if (!config_.report.empty()) {
        std::string path = config_.report + ".kill." + std::to_string(rank_) + "." + std::to_string(incarnation_);
        if (FILE* f = std::fopen(path.c_str(), "w")) {
            std::fprintf(f, "{\"rank\":%d,\"incarnation\":%d,\"process\":%d,\"at\":\"%s\",\"hang\":%s,\"killed_us\":%lld}\n",
                         rank_, incarnation_, impl_->process_, why, hang ? "true" : "false",
                         static_cast<long long>(wall_clock_us()));
            std::fclose(f);
        }
    }
    // A crash: no cleanup, peers find out through MPI. A hang: the process
    // stays, stopped, until something ends it.
    std::raise(hang ? SIGSTOP : SIGKILL);
}


void engine::report_iteration(std::uint64_t iteration) {
    iteration_.store(iteration, std::memory_order_relaxed);
    if (const kill_order* k = my_kill_order(); k && k->iteration && *k->iteration == iteration) die("iteration");
}

void engine::write_report() {
    if (config_.report.empty()) return;
    auto c = counters();
    std::string path = config_.report + "." + std::to_string(rank_) + ".json";
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fprintf(f,
                     "{\"rank\":%d,\"size\":%d,\"incarnation\":%d,\"started_us\":%lld,\"iteration\":%llu,"
                     "\"messages_sent\":%llu,\"messages_received\":%llu,\"bytes_sent\":%llu,\"bytes_received\":%llu,"
                     "\"duplicates_dropped\":%llu,\"malformed\":%llu,\"messages_resent\":%llu,\"bytes_resent\":%llu,"
                     "\"engine_cpu_seconds\":%.6f,%s,\"tasks\":%s}\n",
                     rank_, size_, incarnation_, static_cast<long long>(started_us_),
                     static_cast<unsigned long long>(iteration_.load()),
                     static_cast<unsigned long long>(c.messages_sent), static_cast<unsigned long long>(c.messages_received),
                     static_cast<unsigned long long>(c.bytes_sent), static_cast<unsigned long long>(c.bytes_received),
                     static_cast<unsigned long long>(c.duplicates_dropped), static_cast<unsigned long long>(c.malformed),
                     static_cast<unsigned long long>(c.messages_resent), static_cast<unsigned long long>(c.bytes_resent),
                     c.cpu_seconds, impl_->recovery_json().c_str(),
                     rampart::read_counters().to_json().c_str());
        std::fclose(f);
    }
}

}  // namespace rampart::comm::detail
