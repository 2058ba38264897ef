// Completing the program's requests: waits and tests of every form.

#include "api.hpp"

namespace rp = rampart::replica::detail;

namespace {

using rp::empty_status;

// A request that can still complete: not null, not an inactive persistent one.
std::shared_ptr<rp::request> active(MPI_Request h) {
    if (h == MPI_REQUEST_NULL) return nullptr;
    auto r = rp::from_handle(h);
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
    rp::protocol::get().wait_until([&] {
        done.clear();
        any_active = collect_done(count, handles, done);
        return !any_active || !done.empty();
    });
    return any_active;
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
    rp::protocol& p = rp::started("MPI_Wait");
    auto r = active(*request);
    if (!r) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    p.wait_until([&] { return r->done(); });
    return rp::complete(request, status);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
    rp::protocol& p = rp::started("MPI_Test");
    auto r = active(*request);
    if (!r) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    p.progress_pending();
    *flag = r->done();
    return *flag ? rp::complete(request, status) : MPI_SUCCESS;
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
    rp::protocol& p = rp::started("MPI_Request_get_status");
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

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    rp::protocol& p = rp::started("MPI_Waitall");
    std::vector<std::shared_ptr<rp::request>> rs;
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
        errors += rp::complete(&requests[i], at(statuses, i)) != MPI_SUCCESS;
    }
    return errors ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
    rp::protocol& p = rp::started("MPI_Testall");
    p.progress_pending();
    for (int i = 0; i < count; ++i)
        if (auto r = active(requests[i]); r && !r->done()) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    *flag = 1;
    return MPI_Waitall(count, requests, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
    rp::started("MPI_Waitany");
    std::vector<int> done;
    if (!wait_for_some(count, requests, done)) {
        *index = MPI_UNDEFINED;
        empty_status(status);
        return MPI_SUCCESS;
    }
    *index = done.front();
    return rp::complete(&requests[done.front()], status);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
    rp::protocol& p = rp::started("MPI_Testany");
    p.progress_pending();
    std::vector<int> done;
    if (!collect_done(count, requests, done)) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        empty_status(status);
        return MPI_SUCCESS;
    }
    *flag = !done.empty();
    *index = done.empty() ? MPI_UNDEFINED : done.front();
    return done.empty() ? MPI_SUCCESS : rp::complete(&requests[done.front()], status);
}

static int complete_some(MPI_Request requests[], const std::vector<int>& done, int* outcount, int indices[],
                         MPI_Status statuses[]) {
    int errors = 0;
    for (std::size_t n = 0; n < done.size(); ++n) {
        indices[n] = done[n];
        errors += rp::complete(&requests[done[n]], at(statuses, static_cast<int>(n))) != MPI_SUCCESS;
    }
    *outcount = static_cast<int>(done.size());
    return errors ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    rp::started("MPI_Waitsome");
    std::vector<int> done;
    if (!wait_for_some(incount, requests, done)) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    return complete_some(requests, done, outcount, indices, statuses);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    rp::protocol& p = rp::started("MPI_Testsome");
    p.progress_pending();
    std::vector<int> done;
    if (!collect_done(incount, requests, done)) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    return complete_some(requests, done, outcount, indices, statuses);
}

int MPI_Request_free(MPI_Request* request) {
    rp::started("MPI_Request_free");
    if (*request == MPI_REQUEST_NULL) return MPI_ERR_REQUEST;
    // The operation goes on (the protocol holds it); only the handle ends.
    rp::release_handle(*request);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request* request) {
    rp::protocol& p = rp::started("MPI_Cancel");
    auto r = active(*request);
    if (!r) return MPI_SUCCESS;
    if (r->persistent) r = static_cast<rp::persistent_request&>(*r).current;
    // A receive not yet matched is cancelled; anything else completes as it
    // would have (MPI allows a cancel to fail).
    if (auto* recv = dynamic_cast<rp::recv_request*>(r.get())) p.cancel(*recv);
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request* request) {
    rp::started("MPI_Start");
    auto r = rp::from_handle(*request);
    if (!r->persistent) return MPI_ERR_REQUEST;
    r->start();
    return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request requests[]) {
    for (int i = 0; i < count; ++i)
        if (int rc = MPI_Start(&requests[i])) return rc;
    return MPI_SUCCESS;
}

}  // extern "C"
