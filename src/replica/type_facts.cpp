#include "type_facts.hpp"

#include <mutex>
#include <unordered_map>

namespace rampart::replica::detail {

namespace {

type_facts work_out(MPI_Datatype type) {
    type_facts f;
    int size = 0;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_size(type, &size);
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    f.size = size > 0 ? static_cast<std::size_t>(size) : 0;
    f.contiguous = true_lb == 0 && lb == 0 && extent == size && true_extent == size;
    f.holes = element_holes(type);
    return f;
}

bool named(MPI_Datatype t) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

// Predefined types live as long as the process: by handle. The program's
// thread is the only one that sends (MPI_THREAD_SERIALIZED at most), but
// the table is cheap to guard.
std::unordered_map<MPI_Datatype, type_facts>& named_facts() {
    static auto* table = new std::unordered_map<MPI_Datatype, type_facts>();
    return *table;
}
std::mutex named_mutex;

int delete_facts(MPI_Datatype, int, void* value, void*) {
    delete static_cast<type_facts*>(value);
    return MPI_SUCCESS;
}

int facts_key() {
    static int key = MPI_KEYVAL_INVALID;
    static std::once_flag once;
    std::call_once(once, [] { PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_facts, &key, nullptr); });
    return key;
}

}  // namespace

const type_facts& facts_of(MPI_Datatype type) {
    static const type_facts none;
    if (type == MPI_DATATYPE_NULL) return none;
    {
        std::lock_guard lock(named_mutex);
        auto& table = named_facts();
        if (auto it = table.find(type); it != table.end()) return it->second;
    }
    void* value = nullptr;
    int found = 0;
    if (!named(type)) {
        PMPI_Type_get_attr(type, facts_key(), &value, &found);
        if (found) return *static_cast<const type_facts*>(value);
        auto* facts = new type_facts(work_out(type));
        PMPI_Type_set_attr(type, facts_key(), facts);
        return *facts;
    }
    type_facts facts = work_out(type);
    std::lock_guard lock(named_mutex);
    return named_facts().emplace(type, std::move(facts)).first->second;
}

}  // namespace rampart::replica::detail
