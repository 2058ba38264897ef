// rampart::comm::service: what a service asks of the engine, forwarded.

#include <rampart/comm/detail/engine.hpp>
#include <rampart/comm/service.hpp>

namespace rampart::comm {

namespace {
detail::engine& eng() { return detail::engine::get(); }
}  // namespace

void service::attach() { eng().add_service(this); }

// Safe at any time, also after the runtime ended (as from a static object).
void service::detach() {
    if (auto* e = detail::engine::started(); e && number_ >= 0) e->remove_service(number_);
}

std::uint64_t service::epoch() const { return eng().recoveries(); }

void service::send(int dest, std::vector<char> head, std::vector<segment> data, std::function<void(bool)> done,
                   std::uint64_t epoch) {
    eng().service_send(number_, dest, std::move(head), std::move(data), std::move(done), epoch);
}

std::uint64_t service::new_reply_number() { return eng().new_reply_number(); }

void service::expect_reply(int source, std::uint64_t reply_number, std::vector<receive_segment> into,
                           std::function<void(bool, std::size_t)> done, std::uint64_t epoch) {
    eng().service_receive(number_, source, reply_number, std::move(into), std::move(done), epoch);
}

void service::reply(int dest, std::uint64_t reply_number, std::vector<segment> data, std::function<void(bool)> done,
                    std::uint64_t epoch) {
    eng().service_reply(dest, reply_number, std::move(data), std::move(done), epoch);
}

void service::busy(int delta) { eng().service_busy(delta); }

int service::incarnation_of(int rank) const { return eng().incarnation_of(rank); }

}  // namespace rampart::comm
