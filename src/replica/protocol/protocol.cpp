// The protocol object: start, the end of the job, and the program's
// point-to-point operations as the protocol sees them.

#include "protocol.hpp"

#include "collectives.hpp"
#include "communicators.hpp"
#include "datatypes.hpp"
#include "nodes.hpp"
#include "replica_io.hpp"
#include "report.hpp"
#include "set_collectives.hpp"
#include "set_cores.hpp"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

namespace rampart::replica::detail {

namespace {
protocol* instance = nullptr;

int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (*end != '\0') throw std::runtime_error(std::string(name) + "=" + v + ": not an integer");
    return static_cast<int>(x);
}

}  // namespace

protocol& protocol::get() {
    if (!instance) instance = new protocol();  // lives until the process ends: atexit code may call MPI
    return *instance;
}

bool protocol::initialized() { return instance && instance->started_; }

protocol::protocol(transport& net, const layout& where, int process)
    : net_(&net), layout_(where), process_(process) {
    rank_ = layout_.rank_of(process_);
    replica_ = layout_.replica_of(process_);
    size_tables();
    started_ = true;
    replaced_ = std::exchange(instance, this);
}

protocol::~protocol() {
    if (instance == this) instance = replaced_;
}

void protocol::read_configuration() {
    if (const char* v = std::getenv("RAMPART_FLIP_BITS"); v && *v) {
        char* end = nullptr;
        flip_rate_ = std::strtod(v, &end);
        if (*end != '\0' || flip_rate_ < 0.0 || flip_rate_ > 1.0)
            throw std::runtime_error(std::string("RAMPART_FLIP_BITS=") + v + ": expected a probability in [0, 1]");
    }
    const int seed = env_int("RAMPART_SEED", 1);
    flip_random_.seed(static_cast<std::uint64_t>(seed) * 1000003u + static_cast<std::uint64_t>(process_));
}

// The data tags and the control tags above them must fit MPI's tag space.
void protocol::check_tag_space() const {
    int* tag_ub = nullptr;
    int flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (!flag || *tag_ub < progress_tag) {
        if (process_ == 0) std::fprintf(stderr, "rampart-replica: MPI's largest tag is too small for replication\n");
        std::_Exit(3);
    }
}

// The tables kept per logical rank and per process of the job.
void protocol::size_tables() {
    const auto n = static_cast<std::size_t>(layout_.ranks());
    const auto processes = static_cast<std::size_t>(layout_.processes());
    next_number_.assign(n, 0);
    pending_.resize(n);
    early_acks_.resize(n);
    awaiting_match_.resize(n);
    early_matches_.resize(n);
    source_process_.resize(n);
    // A spare takes its sources when it becomes a replica.
    for (int i = 0; i < layout_.ranks(); ++i)
        source_process_[static_cast<std::size_t>(i)] = replica_ < 0 ? -1 : layout_.process(i, replica_);
    next_expected_.assign(n, 0);
    holes_.resize(n);
    next_from_.assign(processes, 0);
    numbered_.assign(processes, 0);
    channel_next_.assign(processes, 0);
    channel_numbered_.assign(processes, 0);
    for (int i = 0; i < layout_.ranks() && replica_ >= 0; ++i) {  // replica k to k: numbered from 0 without a start
        numbered_[static_cast<std::size_t>(layout_.process(i, replica_))] = 1;
        channel_numbered_[static_cast<std::size_t>(layout_.process(i, replica_))] = 1;
    }
    stash_.resize(processes);
    order_.size(layout_.ranks(), layout_.processes());
    done_from_.assign(processes, 0);
    used_spare_.assign(processes, 0);
    recreations_.assign(n * static_cast<std::size_t>(layout_.replicas()), 0);
    answers_.assign(processes, 0);
    answered_.assign(processes, 0);
    arrived_.assign(processes, 0);
    joined_.assign(processes, 0);
    logging_ = layout_.spares() > 0;
}

void protocol::init(int* argc, char*** argv, int required, int* provided) {
    // A dead peer's TCP connection raises SIGPIPE at the next write, whose
    // default action would end this process too; MPI reports the error
    // instead. A program's own handler is left alone.
    struct sigaction now {};
    if (::sigaction(SIGPIPE, nullptr, &now) == 0 && now.sa_handler == SIG_DFL) std::signal(SIGPIPE, SIG_IGN);
    int granted = 0;
    // The protocol's state has no lock: the program may call MPI from one
    // thread at a time.
    if (PMPI_Init_thread(argc, argv, std::min(required, static_cast<int>(MPI_THREAD_SERIALIZED)), &granted) !=
        MPI_SUCCESS) {
        std::fprintf(stderr, "rampart-replica: MPI_Init failed\n");
        std::_Exit(3);
    }
    if (provided) *provided = granted;
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(MPI_COMM_WORLD, &process_);
    int size = 1;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    try {
        read_configuration();
        layout_ = layout(size, env_int("RAMPART_REPLICAS", 1), env_int("RAMPART_REPLICA_SPARES", 0));
        parse_kill_orders(std::getenv("RAMPART_KILL") ? std::getenv("RAMPART_KILL") : "");
    } catch (const std::exception& e) {
        if (process_ == 0) std::fprintf(stderr, "rampart-replica: %s\n", e.what());
        std::_Exit(3);
    }
    check_tag_space();
    rank_ = layout_.rank_of(process_);
    replica_ = layout_.replica_of(process_);
    size_tables();
    learn_nodes();
    bind_to_set_cores(layout_, process_);
    report_start(*this);
    set_collectives::get().start();
    kills_.start(rank_, replica_, process_);
    if (rank_ < 0) serve_as_spare();  // returns as a re-created replica (rank_ set), or never
    take_standard_input(rank_);
    if (const std::string why = enter_working_directory(replica_); !why.empty()) abort_job(3, why);
    communicators::get().make_predefined(layout_.ranks(), rank_);
    started_ = true;
}

// Every process says its program has ended and waits until every other has
// said so or died: then none still running can mistake this one's exit for
// a crash, and none needs anything more from it (its sends are all
// confirmed, so every live replica of their destinations has them).
void protocol::finalize() {
    report_program_ended();
    set_collectives::get().finish();
    wait_until([&] {
        return sending_.empty() &&
               std::all_of(pending_.begin(), pending_.end(), [](const auto& m) { return m.empty(); });
    });
    for (int p = 0; p < layout_.processes(); ++p)
        if (p != process_ && !layout_.dead(p)) send_control(p, done_tag, 0);
    done_from_[static_cast<std::size_t>(process_)] = 1;
    wait_until([&] {
        for (int p = 0; p < layout_.processes(); ++p)
            if (!done_from_[static_cast<std::size_t>(p)] && !layout_.dead(p)) return false;
        return controls_.empty() || !test_controls();
    });
    report_end(*this, "normal");
    finalized_ = true;
    if (any_death_) return;  // after a failure MPI_Finalize may hang: the process ends without it
    // Should it hang all the same, the process ends with success: every
    // process has ended its program.
    std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::fflush(nullptr);
        ::_exit(0);
    }).detach();
    PMPI_Finalize();
}

void protocol::abort_job(int code, const std::string& message) {
    if (lowest_live_process()) std::fprintf(stderr, "rampart-replica: %s\n", message.c_str());
    report_end(*this, "failed", code);
    std::string text(sizeof(std::int64_t), '\0');
    const std::int64_t exit_code = code;
    std::memcpy(text.data(), &exit_code, sizeof exit_code);
    text += message;
    tell_every_live_process(abort_tag, text.data(), static_cast<int>(text.size()));
    exit_after_printer(code);
}

// The job's last words: small, so they leave at once, or never (a dead peer).
void protocol::tell_every_live_process(int tag, const char* text, int bytes) {
    std::vector<MPI_Request> sent;
    for (int p = 0; p < layout_.processes(); ++p)
        if (p != process_ && !layout_.dead(p) &&
            net_->isend(text, bytes, MPI_CHAR, p, tag, false, &sent.emplace_back()) != MPI_SUCCESS)
            sent.pop_back();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    for (int done = 0; !done && std::chrono::steady_clock::now() < deadline;)
        if (net_->test_all(static_cast<int>(sent.size()), sent.data(), &done) != MPI_SUCCESS) break;
}

// Output of a process may be lost once another has ended the job with an
// error: the lowest live process prints, tells the others, and they exit
// after it (or after a deadline, should it be computing outside MPI).
void protocol::exit_after_printer(int code) {
    std::fflush(nullptr);
    if (lowest_live_process()) {
        tell_every_live_process(printed_tag, nullptr, 0);
        ::_exit(code);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (int printed = printed_seen_; !printed && std::chrono::steady_clock::now() < deadline;) {
        if (net_->iprobe(MPI_ANY_SOURCE, printed_tag, &printed, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            check_failures(MPI_ERR_OTHER);
        if (!printed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ::_exit(code);
}

void protocol::on_abort(MPI_Message msg, const MPI_Status& st) {
    const int bytes = net_->count(st, MPI_CHAR);
    std::string text(static_cast<std::size_t>(std::max(bytes, 0)), '\0');
    net_->mrecv(text.data(), bytes, MPI_CHAR, &msg);
    std::int64_t code = 3;
    if (text.size() >= sizeof code) std::memcpy(&code, text.data(), sizeof code);
    if (lowest_live_process() && text.size() > sizeof code)
        std::fprintf(stderr, "rampart-replica: %s\n", text.c_str() + sizeof code);
    report_end(*this, "stopped", static_cast<int>(code));
    exit_after_printer(static_cast<int>(code));
}

bool protocol::lowest_live_process() const {
    for (int p = 0; p < process_; ++p)
        if (!layout_.dead(p)) return false;
    return true;
}

bool protocol::progress() {
    bool any = poll_world();
    any = test_inbound() || any;
    any = test_sends() || any;
    any = test_controls() || any;
    any = set_collectives::get().progress() || any;
    if (!held_.empty()) any = release_held() || any;
    if (any) idle_polls_ = 0;
    return any;
}

// Polls that found nothing: a few spin (a reply is often a microsecond
// away), then, where processes share cores (ranks and replicas often do),
// the core goes to another process until something happens. A process
// with a core of its own spins: a yield costs a system call per poll.
void protocol::idle() {
    if (++idle_polls_ > spin_polls && node_oversubscribed()) sched_yield();
}

std::shared_ptr<send_request> protocol::isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                              communicator* comm, int context, bool synchronous, same_data* same) {
    auto op = std::make_shared<send_op>();
    op->request.op = op.get();
    std::shared_ptr<send_request> req(op, &op->request);
    if (dest == MPI_PROC_NULL || replaying_) {  // a set-up run again: its receivers have the message
        op->complete = true;
        return req;
    }
    const int to = comm->ranks[static_cast<std::size_t>(dest)];
    op->dest = to;
    op->tag = data_tag(context, tag) | (synchronous ? synchronous_bit : 0);
    op->app_tag = tag;
    op->buf = buf;
    op->count = count;
    op->type = type;
    op->synchronous = synchronous;
    op->to.n = static_cast<std::size_t>(layout_.replicas());
    op->collectives_passed = set_collectives::get().passed();
    op->passed_with_dest = order_.passed_with(to);
    kills_.before_message(static_cast<long>(messages_sent + 1));
    // It may wait for room among the buffered copies, receiving meanwhile:
    // the message takes its number after, so that an acknowledgement of it
    // from a replica ahead finds it pending or is kept as early.
    prepare_payload(*op, same);
    op->number = next_number_[static_cast<std::size_t>(to)]++;
    pending_[static_cast<std::size_t>(to)].add(op->number, op);
    route(op, same);
    if (synchronous) await_match(op);
    ++messages_sent;
    kills_.after_message(static_cast<long>(messages_sent));
    finish(*op);
    return req;
}

std::shared_ptr<recv_request> protocol::irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                                              communicator* comm, int context) {
    auto r = std::make_shared<recv_request>();
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->source = source;
    r->tag = tag;
    r->comm = comm;
    r->uses_comm = comm_use(comm);
    r->context = context;
    if (source == MPI_PROC_NULL) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        PMPI_Status_set_elements(&r->status, MPI_BYTE, 0);
        r->complete = true;
        return r;
    }
    if (replaying_ && replay_receive(*r)) return r;
    if (auto in = match_unexpected(*r)) {
        in->target = r;
        r->matched = in;
        if (in->accepted) deliver(*in);
        return r;
    }
    posted_.push_back(r);
    return r;
}

bool protocol::cancel(recv_request& r) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it)
        if (it->get() == &r) {
            posted_.erase(it);
            r.cancelled = true;
            r.complete = true;
            PMPI_Status_set_cancelled(&r.status, 1);
            return true;
        }
    return false;
}

const inbound* protocol::probe(int source, int tag, communicator* comm, int context, MPI_Status* status) {
    if (replaying_) return replay_probe(source, tag, comm, context, status);
    recv_request r;
    r.source = source;
    r.tag = tag;
    r.comm = comm;
    r.context = context;
    for (const auto& in : unexpected_)
        if (matches(r, *in)) {
            if (status != MPI_STATUS_IGNORE) fill_status(*status, *in, comm);
            return in.get();
        }
    return nullptr;
}

std::shared_ptr<inbound> protocol::take_probed(int source, int tag, communicator* comm, int context,
                                               MPI_Status* status) {
    if (replaying_) {
        const inbound* logged = replay_probe(source, tag, comm, context, status);
        return logged ? std::make_shared<inbound>(*logged) : nullptr;
    }
    recv_request r;
    r.source = source;
    r.tag = tag;
    r.comm = comm;
    r.context = context;
    std::shared_ptr<inbound> in = match_unexpected(r);
    if (in && status != MPI_STATUS_IGNORE) fill_status(*status, *in, comm);
    return in;
}

std::shared_ptr<recv_request> protocol::receive_taken(const std::shared_ptr<inbound>& in, void* buf, int count,
                                                      MPI_Datatype type, communicator* comm, int context) {
    if (replaying_)  // the first logged message of that envelope is the one probed
        return irecv(buf, count, type, comm->rank_of(in->source), in->tag & max_app_tag, comm, context);
    auto r = std::make_shared<recv_request>();
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->source = comm->rank_of(in->source);
    r->tag = in->tag & max_app_tag;
    r->comm = comm;
    r->uses_comm = comm_use(comm);
    r->context = context;
    in->target = r;
    r->matched = in;
    if (in->accepted) deliver(*in);
    return r;
}

}  // namespace rampart::replica::detail
