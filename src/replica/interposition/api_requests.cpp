// Completing the program's requests: waits and tests of every form.

#include "api.hpp"
#include "entry_points.hpp"

namespace rampart::replica::detail::entry {

namespace {

// A request that can still complete: not null, not an inactive persistent one.
std::shared_ptr<request> active(MPI_Request h) {
    if (h == MPI_REQUEST_NULL) return nullptr;
    auto r = from_handle(h);
    return r->active ? r : nullptr;
}

MPI_Status* at(MPI_Status* statuses, int i) {
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + i;
}

// The completed requests among `handles`, completed (index into `done`);
// false when none is active at all.
bool collect_done(int count, MPI_Request handles[], std::vector<int>& done) {
    bool any_active = false;
    for (int i = 0; i < count; ++i) {
        auto r = active(handles[i]);
        if (!r) continue;
        any_active = true;
        if (r->done()) done.push_back(i);
    }
    return any_active;
}

// Waits until one of `handles` at least is done (their indices in `done`);
// false when none is active at all.
bool wait_for_some(int count, MPI_Request handles[], std::vector<int>& done) {
    bool any_active = true;
    protocol::get().wait_until([&] {
        done.clear();
        any_active = collect_done(count, handles, done);
        return !any_active || !done.empty();
    });
    return any_active;
}

// Errors of calls without a communicator go to MPI_COMM_SELF's handler.
int error(int code, const char* fn, const std::string& what) {
    return program_error(communicators::get().find(MPI_COMM_SELF), code, fn, what);
}

int complete_some(MPI_Request requests[], const std::vector<int>& done, int* outcount, int indices[],
                  MPI_Status statuses[]) {
    int errors = 0;
    for (std::size_t n = 0; n < done.size(); ++n) {
        indices[n] = done[n];
        errors += complete(&requests[done[n]], at(statuses, static_cast<int>(n))) != MPI_SUCCESS;
    }
    *outcount = static_cast<int>(done.size());
    return errors ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

}  // namespace

int wait(MPI_Request* request, MPI_Status* status, const char*) {
    protocol& p = protocol::get();
    auto r = active(*request);
    if (!r) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    p.wait_until([&] { return r->done(); });
    return complete(request, status);
}

int test(MPI_Request* request, int* flag, MPI_Status* status, const char*) {
    protocol& p = protocol::get();
    auto r = active(*request);
    if (!r) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    p.progress_pending();
    *flag = r->done();
    return *flag ? complete(request, status) : MPI_SUCCESS;
}

int request_get_status(MPI_Request request, int* flag, MPI_Status* status, const char*) {
    protocol& p = protocol::get();
    auto r = active(request);
    if (!r) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    p.progress_pending();
    *flag = r->done();
    if (*flag && status != MPI_STATUS_IGNORE) *status = r->final_status();
    return MPI_SUCCESS;
}

int waitall(int count, MPI_Request requests[], MPI_Status statuses[], const char*) {
    protocol& p = protocol::get();
    std::vector<std::shared_ptr<request>> rs;
    for (int i = 0; i < count; ++i) rs.push_back(active(requests[i]));
    p.wait_until([&] {
        for (auto& r : rs)
            if (r && !r->done()) return false;
        return true;
    });
    int errors = 0;
    for (int i = 0; i < count; ++i) {
        if (!rs[static_cast<std::size_t>(i)]) {
            empty_status(at(statuses, i));
            continue;
        }
        errors += complete(&requests[i], at(statuses, i)) != MPI_SUCCESS;
    }
    return errors ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[], const char* fn) {
    protocol& p = protocol::get();
    p.progress_pending();
    for (int i = 0; i < count; ++i)
        if (auto r = active(requests[i]); r && !r->done()) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    *flag = 1;
    return waitall(count, requests, statuses, fn);
}

// MPI_Waitany, or MPI_Testany with a flag.
int waitany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status, const char*) {
    std::vector<int> done;
    if (flag) protocol::get().progress_pending();
    const bool any_active = flag ? collect_done(count, requests, done) : wait_for_some(count, requests, done);
    if (flag) *flag = !any_active || !done.empty();
    *index = done.empty() ? MPI_UNDEFINED : done.front();
    if (done.empty()) {
        if (!any_active) empty_status(status);
        return MPI_SUCCESS;
    }
    return complete(&requests[done.front()], status);
}

// MPI_Waitsome (blocking) or MPI_Testsome.
int waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[], bool blocking,
             const char*) {
    std::vector<int> done;
    if (!blocking) protocol::get().progress_pending();
    if (!(blocking ? wait_for_some(incount, requests, done) : collect_done(incount, requests, done))) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    return complete_some(requests, done, outcount, indices, statuses);
}

int request_free(MPI_Request* request, const char* fn) {
    if (*request == MPI_REQUEST_NULL) return error(MPI_ERR_REQUEST, fn, "MPI_REQUEST_NULL");
    // The operation goes on (the protocol holds it); only the handle ends.
    release_handle(*request);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int cancel(MPI_Request* request, const char*) {
    protocol& p = protocol::get();
    auto r = active(*request);
    if (!r) return MPI_SUCCESS;
    if (r->persistent) r = static_cast<persistent_request&>(*r).current;
    // A receive not yet matched is cancelled; anything else completes as it
    // would have (MPI allows a cancel to fail).
    if (auto* recv = dynamic_cast<recv_request*>(r.get())) p.cancel(*recv);
    return MPI_SUCCESS;
}

int start(MPI_Request* request, const char* fn) {
    if (*request == MPI_REQUEST_NULL) return error(MPI_ERR_REQUEST, fn, "MPI_REQUEST_NULL");
    auto r = from_handle(*request);
    if (!r->persistent) return error(MPI_ERR_REQUEST, fn, "a request that is not persistent");
    r->start();
    return MPI_SUCCESS;
}

int startall(int count, MPI_Request requests[], const char* fn) {
    for (int i = 0; i < count; ++i)
        if (int rc = start(&requests[i], fn)) return rc;
    return MPI_SUCCESS;
}

}  // namespace rampart::replica::detail::entry
