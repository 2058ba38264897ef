// What a rank leaves behind for the launcher: the kill orders of fault
// injection carried out (a note of the time, then SIGKILL or SIGSTOP), the
// iteration it reached, and its JSON report at the end of its program and at
// shutdown.

#include "engine_impl.hpp"

#include <nlohmann/json.hpp>

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
        const nlohmann::ordered_json note = {
            {"rank", rank_}, {"incarnation", incarnation_}, {"process", impl_->process_}, {"at", why},
            {"hang", hang},  {"killed_us", wall_clock_us()}};
        if (FILE* f = std::fopen(path.c_str(), "w")) {
            std::fprintf(f, "%s\n", note.dump().c_str());
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

void engine::impl::add_recovery_report(nlohmann::ordered_json& j) const {
    j["process"] = process_;
    j["ended"] = ending_ == ending::normal ? "normal" : ending_ == ending::failed ? "failed" : "stopped";
    j["stopped_by"] = stopped_by_;
    j["failed_at_us"] = failed_at_us_;
    auto& killed = j["killed"] = nlohmann::ordered_json::array();
    for (auto [process, at] : killed_) killed.push_back({{"process", process}, {"at_us", at}});
    j["send_log_bytes"] = log_.bytes();
    j["send_log_messages"] = log_.messages();
    j["send_log_trimmed_messages"] = log_.trimmed_messages();
    j["send_log_trimmed_bytes"] = log_.trimmed_bytes();
    j["channels_lost"] = channels_lost_.load();
    j["lost"] = lost_;
    auto& recoveries = j["recoveries"] = nlohmann::ordered_json::array();
    for (const auto& r : recoveries_) {
        auto replacements = nlohmann::ordered_json::array();
        for (auto [logical, process] : r.replacements) replacements.push_back({logical, process});
        recoveries.push_back({{"dead", r.dead},
                              {"dead_spares", r.dead_spares},
                              {"lost", r.lost},
                              {"replacements", replacements},
                              {"rounds", r.rounds},
                              {"detect_us", r.detect_us},
                              {"agreed_us", r.agreed_us},
                              {"counted_us", r.counted_us},
                              {"resumed_us", r.resumed_us},
                              {"resent_messages", r.resent_messages},
                              {"resent_bytes", r.resent_bytes}});
    }
}

void engine::write_report() {
    if (config_.report.empty()) return;
    const auto c = counters();
    nlohmann::ordered_json j = {{"rank", rank_},
                                {"size", size_},
                                {"incarnation", incarnation_},
                                {"started_us", started_us_},
                                {"iteration", iteration_.load()},
                                {"messages_sent", c.messages_sent},
                                {"messages_received", c.messages_received},
                                {"bytes_sent", c.bytes_sent},
                                {"bytes_received", c.bytes_received},
                                {"duplicates_dropped", c.duplicates_dropped},
                                {"malformed", c.malformed},
                                {"messages_resent", c.messages_resent},
                                {"bytes_resent", c.bytes_resent},
                                {"engine_cpu_seconds", c.cpu_seconds}};
    impl_->add_recovery_report(j);
    j["tasks"] = nlohmann::ordered_json::parse(rampart::read_counters().to_json());
    const std::string path = config_.report + "." + std::to_string(rank_) + ".json";
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fprintf(f, "%s\n", j.dump().c_str());
        std::fclose(f);
    }
}

}  // namespace rampart::comm::detail
