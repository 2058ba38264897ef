// Attributes cached on the program's communicators (MPI_Comm_create_keyval
// and the rest). They are local to a process: a duplicate gets them
// through the keys' copy callbacks, and freeing a communicator (or
// MPI_Finalize, for MPI_COMM_SELF) runs the delete callbacks.

#include "api.hpp"
#include "entry_points.hpp"

#include <algorithm>
#include <unordered_map>

namespace rp = rampart::replica::detail;

namespace {

struct key {
    MPI_Comm_copy_attr_function* copy;
    MPI_Comm_delete_attr_function* remove;
    void* extra;
};

std::unordered_map<int, key>& keys() {
    static auto* all = new std::unordered_map<int, key>();
    return *all;
}

// What MPI itself attaches to every communicator.
bool predefined_attribute(int keyval, void* value, int* flag) {
    static int tag_ub = rp::max_app_tag;
    static int universe = 0;
    if (keyval == MPI_TAG_UB) {
        *static_cast<int**>(value) = &tag_ub;
    } else if (keyval == MPI_UNIVERSE_SIZE) {
        universe = rp::communicators::get().world()->size();
        *static_cast<int**>(value) = &universe;
    } else if (keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_APPNUM ||
               keyval == MPI_LASTUSEDCODE) {
        PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval, value, flag);
        return true;
    } else {
        return false;
    }
    *flag = 1;
    return true;
}

auto find_attribute(rp::communicator& c, int keyval) {
    return std::find_if(c.attributes.begin(), c.attributes.end(), [&](auto& a) { return a.first == keyval; });
}

// The attribute goes once its callback succeeds (which may change the list).
int delete_one(rp::communicator& c, int keyval) {
    const key k = keys().at(keyval);
    void* value = find_attribute(c, keyval)->second;
    MPI_Comm handle = rp::communicators::get().handle(&c);
    if (int rc = k.remove ? k.remove(handle, keyval, value, k.extra) : MPI_SUCCESS) return rc;
    if (auto it = find_attribute(c, keyval); it != c.attributes.end()) c.attributes.erase(it);
    return MPI_SUCCESS;
}

// A key of the program's, or the error.
int check_key(const rp::communicator& c, int keyval, const char* fn) {
    if (keys().count(keyval)) return MPI_SUCCESS;
    return rp::program_error(&c, MPI_ERR_KEYVAL, fn, "key " + std::to_string(keyval) + " is not a communicator key");
}

}  // namespace

namespace rampart::replica::detail {

int copy_attributes(const communicator& from, communicator& to) {
    MPI_Comm old = communicators::get().handle(const_cast<communicator*>(&from));
    const auto attributes = from.attributes;  // a callback may change them
    for (auto& [keyval, value] : attributes) {
        const key& k = keys().at(keyval);
        void* copied = nullptr;
        int flag = 0;
        if (k.copy)
            if (int rc = k.copy(old, keyval, k.extra, value, &copied, &flag)) return rc;
        if (flag) to.attributes.emplace_back(keyval, copied);
    }
    return MPI_SUCCESS;
}

int delete_attributes(communicator& c) {
    while (!c.attributes.empty())
        if (int rc = delete_one(c, c.attributes.back().first)) return rc;  // MPI_Comm_free fails, nothing freed
    return MPI_SUCCESS;
}

}  // namespace rampart::replica::detail

namespace rampart::replica::detail::entry {

int create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* remove, int* keyval,
                  void* extra_state, const char*) {
    // MPI's own key, so that the number is unique; MPI never sees its attributes.
    if (int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval, nullptr)) return rc;
    keys()[*keyval] = key{copy, remove, extra_state};
    return MPI_SUCCESS;
}

// The key stays known to the attributes that still use it.
int free_keyval(int* keyval, const char* fn) {
    if (!keys().count(*keyval)) return program_error(communicators::get().self(), MPI_ERR_KEYVAL, fn, "an invalid key");
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int set_attr(communicator* c, int keyval, void* value, const char* fn) {
    if (int rc = check_key(*c, keyval, fn)) return rc;
    if (find_attribute(*c, keyval) != c->attributes.end())
        if (int rc = delete_one(*c, keyval)) return rc;
    c->attributes.emplace_back(keyval, value);
    return MPI_SUCCESS;
}

int get_attr(communicator* c, int keyval, void* value, int* flag, const char* fn) {
    *flag = 0;
    if (predefined_attribute(keyval, value, flag)) return MPI_SUCCESS;
    if (int rc = check_key(*c, keyval, fn)) return rc;
    if (auto it = find_attribute(*c, keyval); it != c->attributes.end()) {
        *static_cast<void**>(value) = it->second;
        *flag = 1;
    }
    return MPI_SUCCESS;
}

int delete_attr(communicator* c, int keyval, const char* fn) {
    if (int rc = check_key(*c, keyval, fn)) return rc;
    if (find_attribute(*c, keyval) == c->attributes.end())
        return program_error(c, MPI_ERR_ARG, fn, "no attribute with that key");
    return delete_one(*c, keyval);
}

}  // namespace rampart::replica::detail::entry
