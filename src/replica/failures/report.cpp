#include "report.hpp"

#include "protocol.hpp"
#include "set_collectives.hpp"
#include "set_cores.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

namespace rampart::replica::detail {

namespace {
std::int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

nlohmann::ordered_json& state() {
    static auto* j = new nlohmann::ordered_json();
    return *j;
}

void write(const protocol& p) {
    const char* prefix = std::getenv("RAMPART_REPORT");
    if (!prefix || !*prefix) return;
    const std::string path = std::string(prefix) + ".replica." + std::to_string(p.process()) + ".json";
    std::ofstream(path + ".tmp") << state().dump() << "\n";
    std::rename((path + ".tmp").c_str(), path.c_str());
}
}  // namespace

void report_start(const protocol& p) {
    auto& j = state();
    j["process"] = p.process();
    j["rank"] = p.rank();
    j["replica"] = p.replica();
    j["ranks"] = p.where().ranks();
    j["replicas"] = p.where().replicas();
    j["cores"] = current_cores();
    j["started_us"] = now_us();
    // For rampart-run to see when this process ends, of whatever cause.
    j["pid"] = ::getpid();
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    j["host"] = host;
    j["ended"] = nullptr;
    write(p);
}

namespace {
void add_counters(const protocol& p) {
    auto& j = state();
    j["messages_sent"] = p.messages_sent;
    j["acks_sent"] = p.acks_sent;
    j["acks_received"] = p.acks_received;
    j["messages_resent"] = p.resent;
    j["duplicates_dropped"] = p.duplicates_dropped;
    j["bits_flipped"] = p.bits_flipped;
    j["corruptions_detected"] = p.corruptions_detected;
    j["deaths_seen"] = p.replicas_lost;
    j["states_sent"] = p.states_sent;
    j["syncs"] = p.syncs();
    j["collectives_in_set"] = set_collectives::get().gathered_in_set;
    j["collectives_pulled"] = set_collectives::get().gathered_by_pulling;
}
}  // namespace

void report_program_ended() { state()["program_ended_us"] = now_us(); }

void report_end(const protocol& p, const std::string& ended, int exit_code) {
    auto& j = state();
    j["ended"] = ended;
    j["exit_code"] = exit_code;
    j["ended_us"] = now_us();
    add_counters(p);
    write(p);
}

void report_death(const protocol& p, int process) {
    state()["deaths"].push_back({{"process", process}, {"seen_us", now_us()}});
    add_counters(p);
    write(p);
}

void report_recreated(const protocol& p) {
    auto& j = state();
    j["rank"] = p.rank();
    j["replica"] = p.replica();
    j["cores"] = current_cores();
    j["recreated"] = {{"began_us", p.recreation_began_us},
                      {"done_us", p.recreation_done_us},
                      {"state_bytes", p.state_bytes},
                      {"sync", p.syncs() + 1}};
    write(p);
}

void report_corruption(const protocol& p, const send_op& op, int replica) {
    auto& j = state();
    j["corruptions"].push_back({{"rank", p.rank()},
                                {"peer", op.dest},
                                {"tag", op.app_tag},
                                {"message", op.number},
                                {"replica", replica},
                                {"at_us", now_us()}});
    add_counters(p);
    write(p);
}

void report_collective_corruption(const protocol& p, std::uint64_t index) {
    state()["corruptions"].push_back({{"rank", p.rank()}, {"collective", index}, {"at_us", now_us()}});
    add_counters(p);
    write(p);
}

std::string divergence_causes(bool faults_injected) {
    return std::string(". The replicas of a rank sent or received different data: either a fault (a bit flipped in "
                       "memory or on its way") +
           (faults_injected ? ", as --flip-bits injects)" : ")") +
           " or a program that is not send-deterministic (what it sends depends on time, on the order in which "
           "receives from any source match, or on uninitialised memory). The same run again without faults "
           "tells them apart: a difference again, at the same message, comes from the program (docs/replica.md)";
}

}  // namespace rampart::replica::detail
